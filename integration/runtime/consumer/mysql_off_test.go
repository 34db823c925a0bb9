//go:build !mysql

package consumer_test

// Without -tags mysql the MySQL entries are not built: make test-mysql
// runs them against a throwaway MariaDB (see mysql_on_test.go).

func mysqlMatrix() []matrixEntry {
	return nil
}

func mysqlBackends() []dbBackend { return nil }
