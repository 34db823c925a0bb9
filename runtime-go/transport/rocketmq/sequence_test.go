package rocketmq

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// Messages of one queue that reach the sequencer in any order leave it in
// offset order; a gap in the offsets costs one grace, not a stall; a
// message behind the queue's turn (a redelivery) goes at once.
func TestSequencerOrders(t *testing.T) {
	for _, tc := range []struct {
		name    string
		offsets []int64
		want    []int64
	}{
		{"in order", []int64{0, 1, 2, 3}, []int64{0, 1, 2, 3}},
		{"reversed", []int64{3, 2, 1, 0}, []int64{0, 1, 2, 3}},
		{"a gap", []int64{7, 5, 6, 9}, []int64{5, 6, 7, 9}},
		{"not from zero", []int64{42, 41, 40}, []int64{40, 41, 42}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 20 {
				s := newSequencer(20 * time.Millisecond)
				stop := make(chan struct{})
				var (
					mu  sync.Mutex
					got []int64
					wg  sync.WaitGroup
				)
				offsets := slices.Clone(tc.offsets)
				rand.Shuffle(len(offsets), func(i, j int) { offsets[i], offsets[j] = offsets[j], offsets[i] })
				for _, off := range offsets {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if !s.wait("q", off, stop) {
							t.Error("wait gave up without stop")
							return
						}
						mu.Lock()
						got = append(got, off)
						mu.Unlock()
						s.pass("q", off, off)
					}()
				}
				wg.Wait()
				if !slices.Equal(got, tc.want) {
					t.Fatalf("handed on %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestSequencerBehindAndStop(t *testing.T) {
	stop := make(chan struct{})
	s := newSequencer(10 * time.Millisecond)
	if !s.wait("q", 5, stop) {
		t.Fatal("first message")
	}
	s.pass("q", 5, 5)
	done := make(chan bool)
	go func() { done <- s.wait("q", 2, stop) }() // behind the turn: a redelivery
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("a message behind the turn was refused")
		}
	case <-time.After(time.Second):
		t.Fatal("a message behind the turn waited")
	}
	// A queue's first message waits a grace for a predecessor; stopped
	// meanwhile, it does not go on.
	slow := newSequencer(time.Hour)
	go func() { done <- slow.wait("q", 9, stop) }()
	time.Sleep(20 * time.Millisecond)
	close(stop)
	if <-done {
		t.Fatal("a waiting message went on after stop")
	}
}

// Batches of one queue (first..last) that reach the sequencer in any
// order leave it in offset order.
func TestSequencerBatches(t *testing.T) {
	batches := [][2]int64{{0, 2}, {3, 5}, {6, 6}, {7, 9}}
	for range 20 {
		s := newSequencer(20 * time.Millisecond)
		stop := make(chan struct{})
		var (
			mu  sync.Mutex
			got []int64
			wg  sync.WaitGroup
		)
		shuffled := slices.Clone(batches)
		rand.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		for _, b := range shuffled {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if !s.wait("q", b[0], stop) {
					t.Error("wait gave up without stop")
					return
				}
				mu.Lock()
				got = append(got, b[0])
				mu.Unlock()
				s.pass("q", b[0], b[1])
			}()
		}
		wg.Wait()
		if want := []int64{0, 3, 6, 7}; !slices.Equal(got, want) {
			t.Fatalf("batches handed on from %v, want %v", got, want)
		}
	}
}
