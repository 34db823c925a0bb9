module github.com/msgcontract/msgcontract/runtime-go/sqldb/mysqldb

go 1.26.8

require (
	github.com/go-sql-driver/mysql v1.10.2
	github.com/msgcontract/msgcontract/runtime-go v0.0.0
)

require filippo.io/edwards25519 v1.2.0 // indirect

// Development: the sibling modules of this checkout (go.work at the
// repository root does the same). A module that requires this one
// ignores these lines; released go.mod files carry versions instead.
replace github.com/msgcontract/msgcontract/runtime-go => ../..
