package rocketmq

import (
	"sync"
	"time"
)

// sequencer hands a queue's batches on in offset order. The push client
// runs its callback for each batch on a goroutine of its own, started in
// offset order, so two batches of one queue may reach the subscription in
// either order; a batch waits for its predecessor, at most grace at a
// time (a gap in the offsets: a message filtered out, a queue taken over
// at its committed offset), after which the lowest waiting offset goes
// first.
type sequencer struct {
	grace time.Duration

	mu     sync.Mutex
	queues map[string]*seqQueue
}

type seqQueue struct {
	next    int64 // the offset whose turn it is; -1 before the first
	busy    bool  // a message has the turn and has not passed it on
	waiting map[int64]chan struct{}
}

func newSequencer(grace time.Duration) *sequencer {
	return &sequencer{grace: grace, queues: map[string]*seqQueue{}}
}

// wait blocks until it is the turn of the batch starting at off in queue
// q, or stop closes (false).
func (s *sequencer) wait(q string, off int64, stop <-chan struct{}) bool {
	s.mu.Lock()
	sq := s.queues[q]
	if sq == nil {
		sq = &seqQueue{next: -1, waiting: map[int64]chan struct{}{}}
		s.queues[q] = sq
	}
	if sq.next > off {
		s.mu.Unlock() // behind (a redelivery): no wait, no turn
		return true
	}
	if sq.next == off && !sq.busy {
		sq.busy = true
		s.mu.Unlock()
		return true
	}
	ch := make(chan struct{})
	sq.waiting[off] = ch
	s.mu.Unlock()
	t := time.NewTimer(s.grace)
	defer t.Stop()
	for {
		select {
		case <-ch:
			return true
		case <-stop:
			s.mu.Lock()
			delete(sq.waiting, off)
			s.mu.Unlock()
			return false
		case <-t.C:
			s.mu.Lock()
			if _, still := sq.waiting[off]; still && !sq.busy {
				lowest := off
				for o := range sq.waiting {
					lowest = min(lowest, o)
				}
				sq.next, sq.busy = lowest, true
				close(sq.waiting[lowest])
				delete(sq.waiting, lowest)
			}
			s.mu.Unlock()
			t.Reset(s.grace)
		}
	}
}

// pass ends the turn of the batch first..last in queue q: its successor
// goes.
func (s *sequencer) pass(q string, first, last int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sq := s.queues[q]
	if sq == nil {
		return
	}
	if !sq.busy || sq.next != first {
		return // a batch that was behind: it never had the turn
	}
	sq.next, sq.busy = last+1, false
	if ch, ok := sq.waiting[sq.next]; ok {
		sq.busy = true
		close(ch)
		delete(sq.waiting, sq.next)
	}
}
