package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// load is one recorded run at one offered rate.
type load struct {
	load string // "fixed" or "max80"
	rate float64
	hist *hdrhistogram.Histogram
	// legs are the producer (due to commit), relay (commit to the
	// broker's acknowledgement) and consumer (to the effect commit)
	// parts of each message's latency.
	legs [3]*hdrhistogram.Histogram
}

type caseResult struct {
	max   float64
	loads []load
}

// measureCase finds the case's maximum, then records at the fixed rate
// and at 80% of the maximum.
func measureCase(ctx context.Context, cfg config, r *rig) (caseResult, error) {
	var res caseResult
	var err error
	if res.max, err = maxRate(ctx, cfg, r); err != nil {
		return res, fmt.Errorf("maximum: %w", err)
	}
	for _, l := range []load{{load: "fixed", rate: cfg.rate}, {load: "max80", rate: 0.8 * res.max}} {
		if _, err := paced(ctx, cfg, r, fmt.Sprintf("w%.0f", l.rate), l.rate, cfg.warmup); err != nil {
			return res, fmt.Errorf("warm-up at %.0f/s: %w", l.rate, err)
		}
		ids, err := paced(ctx, cfg, r, fmt.Sprintf("m%.0f", l.rate), l.rate, cfg.duration)
		if err != nil {
			return res, fmt.Errorf("at %.0f/s: %w", l.rate, err)
		}
		if l.hist, l.legs, err = collect(ctx, r, ids); err != nil {
			return res, fmt.Errorf("at %.0f/s: %w", l.rate, err)
		}
		res.loads = append(res.loads, l)
	}
	return res, nil
}

// maxRate produces cfg.maxN messages with cfg.producers producers as fast
// as they commit and returns messages per second from the first begin to
// the last effect commit.
func maxRate(ctx context.Context, cfg config, r *rig) (float64, error) {
	start := time.Now()
	ids, err := produceAll(ctx, cfg, r, "max", cfg.maxN, func(int) time.Time { return time.Now() })
	if err != nil {
		return 0, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := r.clock.wait(wctx, ids); err != nil {
		return 0, err
	}
	rate := float64(len(ids)) / time.Since(start).Seconds()
	_, _, _ = r.clock.take(ids)
	return rate, nil
}

// paced produces at rate for d on an open-loop schedule: message i is due
// at start + i/rate, whether or not the ones before it are done.
func paced(ctx context.Context, cfg config, r *rig, prefix string, rate float64, d time.Duration) ([]string, error) {
	n := int(rate * d.Seconds())
	start := time.Now()
	return produceAll(ctx, cfg, r, prefix, n, func(i int) time.Time {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(due))
		return due
	})
}

// produceAll runs n producer transactions on cfg.producers goroutines;
// schedule(i), called in order, returns when message i is due.
func produceAll(ctx context.Context, cfg config, r *rig, prefix string, n int, schedule func(int) time.Time) ([]string, error) {
	type job struct {
		i   int
		due time.Time
	}
	jobs := make(chan job, cfg.producers)
	ids := make([]string, n)
	var wg sync.WaitGroup
	var once sync.Once
	var failed error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range cfg.producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				id, err := r.produce(ctx, fmt.Sprintf("%s-%d", prefix, j.i), j.due)
				if err != nil {
					once.Do(func() { failed = err; cancel() })
					continue
				}
				ids[j.i] = id
			}
		}()
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		jobs <- job{i, schedule(i)}
	}
	close(jobs)
	wg.Wait()
	return ids, failed
}

// collect waits for every id's effect and returns their latencies in a
// histogram of microseconds (1 µs to 10 min, 3 significant digits).
func collect(ctx context.Context, r *rig, ids []string) (*hdrhistogram.Histogram, [3]*hdrhistogram.Histogram, error) {
	var legs [3]*hdrhistogram.Histogram
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := r.clock.wait(wctx, ids); err != nil {
		return nil, legs, err
	}
	got, legTimes, missing := r.clock.take(ids)
	if missing > 0 {
		return nil, legs, fmt.Errorf("%d of %d messages without a latency", missing, len(ids))
	}
	h, err := histogram(got)
	for i := range legs {
		if err == nil {
			legs[i], err = histogram(legTimes[i])
		}
	}
	return h, legs, err
}

// histogram records ds in microseconds, from 1 µs to 10 min at 3
// significant digits.
func histogram(ds []time.Duration) (*hdrhistogram.Histogram, error) {
	h := hdrhistogram.New(1, int64(10*time.Minute/time.Microsecond), 3)
	for _, d := range ds {
		if err := h.RecordValue(max(d.Microseconds(), 1)); err != nil {
			return nil, err
		}
	}
	return h, nil
}
