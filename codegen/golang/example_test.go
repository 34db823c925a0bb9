package golang_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/msgcontract/msgcontract/codegen/emit"
	"github.com/msgcontract/msgcontract/codegen/golang"
	"github.com/msgcontract/msgcontract/codegen/model"
)

// Generate writes one file per contract beside protoc-gen-go's; here, the
// BizKey method it generates for an event.
func ExampleGenerate() {
	const src = `syntax = "proto3";
package shop.payment.v1;
import "msgcontract/v1/options.proto";
option go_package = "example.com/shop/payment/v1;paymentv1";
message PaySuccess {
  option (msgcontract.v1.event) = {
    topic: "order-event" event_type: "PAY_SUCCESS"
    biz_key: "order_id:{order_id}:PAY_SUCCESS"
  };
  string order_id = 1;
  int64 amount = 2;
}`
	set, err := model.Load(context.Background(), model.Config{Sources: map[string]string{"payment.proto": src}}, "payment.proto")
	if err != nil {
		panic(err)
	}
	files, err := golang.Generate(set, emit.Params{Lang: "go", Paths: "source_relative"})
	if err != nil {
		panic(err)
	}
	code := string(files[0].Content)
	start := strings.Index(code, "func (m *PaySuccess) BizKey()")
	end := start + strings.Index(code[start:], "\n}\n") + 3
	fmt.Println(files[0].Name)
	fmt.Print(code[start:end])
	// Output:
	// payment.msgcontract.go
	// func (m *PaySuccess) BizKey() (string, error) {
	// 	var b bizkey.Builder
	// 	b.Literal("order_id:")
	// 	b.String("order_id", m.GetOrderId())
	// 	b.Literal(":PAY_SUCCESS")
	// 	return b.Key()
	// }
}
