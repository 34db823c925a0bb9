package compat

import (
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// services compares services and their RPCs. Events do not use them, but
// a schema may carry them, and a client and a server on different
// versions must still agree on every call.
func (c *checker) services() {
	for _, name := range c.prev.svcOrder {
		os := c.prev.services[name]
		ns, ok := c.next.services[c.newName(name)]
		if !ok {
			c.reportPrev(ServiceDeleted, os, "service %s was deleted; clients calling it get Unimplemented", name)
			continue
		}
		oms := os.Methods()
		for i := 0; i < oms.Len(); i++ {
			om := oms.Get(i)
			nm := ns.Methods().ByName(om.Name())
			if nm == nil {
				c.report(RPCDeleted, string(om.FullName()), c.pos(ns), "rpc %s was deleted; clients calling it get Unimplemented", om.FullName())
				continue
			}
			c.method(om, nm)
		}
	}
}

func (c *checker) method(om, nm protoreflect.MethodDescriptor) {
	elem := string(nm.FullName())
	if on, nn := c.newName(string(om.Input().FullName())), string(nm.Input().FullName()); on != nn {
		c.report(RPCRequestTypeChanged, elem, c.pos(nm), "rpc %s changed its request type from %s to %s", elem, om.Input().FullName(), nn)
	}
	if on, nn := c.newName(string(om.Output().FullName())), string(nm.Output().FullName()); on != nn {
		c.report(RPCResponseTypeChanged, elem, c.pos(nm), "rpc %s changed its response type from %s to %s", elem, om.Output().FullName(), nn)
	}
	if om.IsStreamingClient() != nm.IsStreamingClient() || om.IsStreamingServer() != nm.IsStreamingServer() {
		c.report(RPCStreamingChanged, elem, c.pos(nm), "rpc %s changed from %s to %s", elem, callShape(om), callShape(nm))
	}
	oi, ni := idempotency(om), idempotency(nm)
	if oi != ni {
		c.report(RPCIdempotencyChanged, elem, c.pos(nm), "rpc %s changed its idempotency_level from %s to %s", elem, oi, ni)
	}
}

func idempotency(m protoreflect.MethodDescriptor) descriptorpb.MethodOptions_IdempotencyLevel {
	o, _ := m.Options().(*descriptorpb.MethodOptions)
	return o.GetIdempotencyLevel()
}

func callShape(m protoreflect.MethodDescriptor) string {
	switch {
	case m.IsStreamingClient() && m.IsStreamingServer():
		return "bidirectional streaming"
	case m.IsStreamingClient():
		return "client streaming"
	case m.IsStreamingServer():
		return "server streaming"
	}
	return "unary"
}
