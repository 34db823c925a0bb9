package consumer

// Codes the runtime gives failures that carry no handler code. They are
// negative, so they fall outside every contract error range and are
// classified by the contract's `unclassified` setting, except CodeDecode,
// which is never retried.
const (
	// CodePanic: the handler panicked. The panic is recovered, logged with
	// its stack, and treated as a failure with this code.
	CodePanic int32 = -1
	// CodeTimeout: the handler returned after its HandlerTimeout expired.
	CodeTimeout int32 = -2
	// CodeDecode: the envelope or payload did not decode. Dead-lettered at
	// once.
	CodeDecode int32 = -3
	// CodeNoHandler: no handler is registered for the message's event
	// type. Dead-lettered at once.
	CodeNoHandler int32 = -4
)

// MaxErrorMessage is the longest last_error message kept in an envelope or
// dead-letter record, in bytes; longer messages are cut at a UTF-8
// boundary. Retries never accumulate error history.
const MaxErrorMessage = 512
