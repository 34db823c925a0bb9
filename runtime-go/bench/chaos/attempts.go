package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/msgcontract/msgcontract/runtime-go/backoff"
	"github.com/msgcontract/msgcontract/runtime-go/envelopepb"
)

// Retry timing. A Go consumer reports each retry attempt its handler
// starts, on its stdout, as one line
//
//	attempt <biz_key> <retry_count> <failed_at> <not_before> <started>
//
// (milliseconds since the epoch; failed_at and not_before are the retry
// copy's own: when the previous attempt's failure was decided and when the
// copy may run). The parent keeps the first start of each (key, retry)
// and checks it against the contract's schedule: the delay chosen,
// not_before - failed_at, must be d(n) plus a jitter within the policy's,
// and the copy must start within lateSlack of not_before. A start later
// than that while a fault (or the recovery from one) was under way is
// explained by the fault and counted apart; any other is a violation.
const lateSlack = 50 * time.Millisecond

// reportAttempt is the consumer's side: one write per line, so lines from
// one process never interleave.
func reportAttempt(env *envelopepb.Envelope, started time.Time) {
	if env.GetRetryCount() < 1 {
		return
	}
	line := fmt.Sprintf("attempt %s %d %d %d %d\n", env.GetBizKey(), env.GetRetryCount(),
		env.GetLastError().GetFailedAt(), env.GetNotBefore(), started.UnixMilli())
	_, _ = os.Stdout.WriteString(line)
}

type attemptKey struct {
	key string
	n   int
}

type attempt struct{ failedAt, notBefore, started int64 }

// attempts collects the reports of every child.
type attempts struct {
	mu    sync.Mutex
	first map[attemptKey]attempt
	bad   int // lines that did not parse
}

func newAttempts() *attempts { return &attempts{first: map[attemptKey]attempt{}} }

func (a *attempts) line(s string) {
	f := strings.Fields(s)
	if len(f) != 6 || f[0] != "attempt" {
		a.mu.Lock()
		a.bad++
		a.mu.Unlock()
		return
	}
	var nums [4]int64
	for i := range nums {
		v, err := strconv.ParseInt(f[i+2], 10, 64)
		if err != nil {
			a.mu.Lock()
			a.bad++
			a.mu.Unlock()
			return
		}
		nums[i] = v
	}
	k := attemptKey{f[1], int(nums[0])}
	at := attempt{nums[1], nums[2], nums[3]}
	a.mu.Lock()
	defer a.mu.Unlock()
	if old, ok := a.first[k]; !ok || at.started < old.started {
		a.first[k] = at
	}
}

// writer is a child's stdout: it hands complete lines to a.
func (a *attempts) writer() *lineWriter { return &lineWriter{a: a} }

type lineWriter struct {
	a   *attempts
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.a.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

// dump writes every first start and the faults' windows to path, as CSV,
// for a look at where the late ones fall (-retry-log).
func (a *attempts) dump(path string, faults *faultLog) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var b bytes.Buffer
	b.WriteString("kind,key,retry,failed_at_ms,not_before_ms,started_ms,late_ms,in_fault\n")
	faults.mu.Lock()
	for _, w := range faults.windows {
		fmt.Fprintf(&b, "fault,,,%d,,%d,,\n", w.from.UnixMilli(), w.to.UnixMilli())
	}
	faults.mu.Unlock()
	for k, at := range a.first {
		in := faults.covers(time.UnixMilli(at.notBefore), time.UnixMilli(at.started))
		fmt.Fprintf(&b, "retry,%s,%d,%d,%d,%d,%d,%v\n", k.key, k.n, at.failedAt, at.notBefore, at.started, at.started-at.notBefore, in)
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// retryVerdict is the outcome of the retry timing check.
type retryVerdict struct {
	checked      int           // retries started
	lateInFault  int           // started late, while a fault was under way
	violations   int           // delay off the schedule, or late with no fault to explain it
	worstOnTime  time.Duration // the latest start, of those not explained by a fault
	p50, p99     time.Duration // lateness of those not explained by a fault
	firstProblem string        // the first violation, for the report
}

// check judges every first start against policy; faults explains late
// ones.
func (a *attempts) check(policy backoff.Policy, faults *faultLog) (v retryVerdict) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var lates []time.Duration
	defer func() {
		slices.Sort(lates)
		if len(lates) > 0 {
			v.p50, v.p99 = lates[len(lates)/2], lates[len(lates)*99/100]
		}
	}()
	for k, at := range a.first {
		v.checked++
		chosen := at.notBefore - at.failedAt
		lo := policy.BaseDelay(k.n)
		hi := lo + policy.JitterMs
		late := time.Duration(at.started-at.notBefore) * time.Millisecond
		var problem string
		switch {
		case chosen < lo || chosen > hi:
			problem = fmt.Sprintf("%s retry %d: delay chosen %dms, the schedule allows %d..%dms", k.key, k.n, chosen, lo, hi)
		case late < 0:
			problem = fmt.Sprintf("%s retry %d: started %v before its not_before", k.key, k.n, -late)
		case late > lateSlack && faults.covers(time.UnixMilli(at.notBefore), time.UnixMilli(at.started)):
			v.lateInFault++
			continue
		case late > lateSlack:
			lates = append(lates, late)
			problem = fmt.Sprintf("%s retry %d: started %v after its not_before, with no fault under way", k.key, k.n, late)
		}
		if problem != "" {
			v.violations++
			if v.firstProblem == "" {
				v.firstProblem = problem
			}
			continue
		}
		v.worstOnTime = max(v.worstOnTime, late)
		lates = append(lates, late)
	}
	if a.bad > 0 {
		v.violations += a.bad
		if v.firstProblem == "" {
			v.firstProblem = fmt.Sprintf("%d attempt reports did not parse", a.bad)
		}
	}
	return v
}
