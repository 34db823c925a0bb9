module example.com/payments

go 1.26

require github.com/msgcontract/msgcontract/runtime-go v0.0.0
