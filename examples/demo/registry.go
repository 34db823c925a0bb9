package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// registryServer is the demo's schema registry: msgcontract's own,
// served on a loopback port for the whole run, on a SQLite store in the
// work directory. The registry step talks to it, and on Kafka the relay
// frames every record with the schema id it hands out.
type registryServer struct {
	URL string
	st  *store.Store
	hs  *http.Server
}

func startRegistry(workDir string) (*registryServer, error) {
	st, err := store.Open(filepath.Join(workDir, "registry.db"))
	if err != nil {
		return nil, err
	}
	srv, err := api.New(api.Config{Store: st})
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	r := &registryServer{URL: "http://" + ln.Addr().String(), st: st, hs: &http.Server{Handler: srv}}
	go r.hs.Serve(ln)
	return r, nil
}

func (r *registryServer) Close() {
	r.hs.Close()
	r.st.Close()
}

// registryStep registers the payment contract in the registry at base,
// then proposes a version whose biz_key template differs and shows the
// registry's verdict. It reports whether the change was rejected.
func registryStep(out io.Writer, base, protoPath string) (bool, error) {
	src, err := os.ReadFile(protoPath)
	if err != nil {
		return false, err
	}
	const subject = "order-event-value"
	var reg struct {
		ID int64 `json:"id"`
	}
	if code, err := post(base+"/subjects/"+subject+"/versions", string(src), &reg); err != nil || code != http.StatusOK {
		return false, fmt.Errorf("register %s: HTTP %d: %v", subject, code, err)
	}
	fmt.Fprintf(out, "registry: registered shop/payment/v1/payment.proto as %s, schema id %d\n", subject, reg.ID)

	const oldKey = `biz_key: "order_id:{order_id}:PAY_SUCCESS"`
	changed := strings.Replace(string(src), oldKey, `biz_key: "order_id:{order_id}:{currency}:PAY_SUCCESS"`, 1)
	if changed == string(src) {
		return false, fmt.Errorf("%s no longer holds %s; update the demo", protoPath, oldKey)
	}
	fmt.Fprintln(out, "registry: proposing a version whose PaySuccess biz_key adds {currency} ...")
	var verdict struct {
		IsCompatible bool     `json:"is_compatible"`
		Messages     []string `json:"messages"`
	}
	code, err := post(base+"/compatibility/subjects/"+subject+"/versions/latest?verbose=true", changed, &verdict)
	if err != nil || code != http.StatusOK {
		return false, fmt.Errorf("compatibility check: HTTP %d: %v", code, err)
	}
	for _, m := range verdict.Messages {
		fmt.Fprintln(out, "  ", m)
	}
	var rejected struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	code, err = post(base+"/subjects/"+subject+"/versions", changed, &rejected)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "registry: register answered HTTP %d, error_code %d: old and new consumers would disagree during a rolling deploy\n",
		code, rejected.ErrorCode)
	return !verdict.IsCompatible && code == http.StatusConflict, nil
}

func post(url, schema string, into any) (int, error) {
	body, err := json.Marshal(map[string]string{"schemaType": "PROTOBUF", "schema": schema})
	if err != nil {
		return 0, err
	}
	resp, err := http.Post(url, api.ContentType, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, json.NewDecoder(resp.Body).Decode(into)
}
