// Package client is a small client of the registry's REST API (and so of
// any Confluent Schema Registry) for the commands a build runs: push a
// contract with its imports, check one, and fetch the versions the
// offline checker compares against.
package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/msgcontract/msgcontract/registry/datacontract"
	"github.com/msgcontract/msgcontract/registry/subjectref"
)

// Client talks to one registry.
type Client struct {
	// URL is the registry's base URL, e.g. http://127.0.0.1:8081.
	URL string
	// Token, when set, is sent as a bearer token (a registry token or
	// an OIDC token).
	Token string
	// HTTP defaults to http.DefaultClient.
	HTTP *http.Client
}

// Error is an error answer of the registry.
type Error struct {
	Status int
	Code   int    `json:"error_code"`
	Msg    string `json:"message"`
}

func (e *Error) Error() string {
	return fmt.Sprintf("registry answered %d (error_code %d): %s", e.Status, e.Code, e.Msg)
}

// Incompatible reports a 409: the schema breaks the subject's level.
func (e *Error) Incompatible() bool { return e.Status == http.StatusConflict }

const contentType = "application/vnd.schemaregistry.v1+json"

func (c *Client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(c.URL, "/")+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", contentType)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		e := &Error{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Msg == "" {
			e.Msg = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("registry answer to %s %s is not what was expected: %w", method, path, err)
	}
	return nil
}

func subjectPath(subject string) string { return "/subjects/" + url.PathEscape(subject) }

type schemaBody struct {
	SchemaType string                 `json:"schemaType"`
	Schema     string                 `json:"schema"`
	References []subjectref.Reference `json:"references,omitempty"`
	Metadata   *datacontract.Metadata `json:"metadata,omitempty"`
	RuleSet    *datacontract.RuleSet  `json:"ruleSet,omitempty"`
}

// Register registers text under subject and returns its id and version.
func (c *Client) Register(ctx context.Context, subject, text string, refs []subjectref.Reference) (id int64, version int, err error) {
	return c.RegisterContract(ctx, subject, text, refs, nil, nil)
}

// RegisterContract is Register with a data contract: metadata and rules
// (nil: the registry keeps the previous version's; empty: none).
func (c *Client) RegisterContract(ctx context.Context, subject, text string, refs []subjectref.Reference, md *datacontract.Metadata, rs *datacontract.RuleSet) (id int64, version int, err error) {
	var reg struct {
		ID int64 `json:"id"`
	}
	body := schemaBody{"PROTOBUF", text, refs, md, rs}
	if err := c.do(ctx, http.MethodPost, subjectPath(subject)+"/versions", body, &reg); err != nil {
		return 0, 0, err
	}
	var v struct {
		Version int `json:"version"`
	}
	err = c.do(ctx, http.MethodPost, subjectPath(subject), body, &v)
	return reg.ID, v.Version, err
}

// Contract fetches one version's metadata and rules (subjectref.Latest
// for the newest); nil for none.
func (c *Client) Contract(ctx context.Context, subject string, version int) (*datacontract.Metadata, *datacontract.RuleSet, error) {
	which := "latest"
	if version != subjectref.Latest {
		which = strconv.Itoa(version)
	}
	var v struct {
		Metadata *datacontract.Metadata `json:"metadata"`
		RuleSet  *datacontract.RuleSet  `json:"ruleSet"`
	}
	err := c.do(ctx, http.MethodGet, subjectPath(subject)+"/versions/"+which, nil, &v)
	return v.Metadata, v.RuleSet, err
}

// Lookup returns the version of subject holding text.
func (c *Client) Lookup(ctx context.Context, subject, text string, refs []subjectref.Reference) (int, error) {
	var v struct {
		Version int `json:"version"`
	}
	err := c.do(ctx, http.MethodPost, subjectPath(subject), schemaBody{SchemaType: "PROTOBUF", Schema: text, References: refs}, &v)
	return v.Version, err
}

// Check asks whether text may be registered under subject, and why not.
func (c *Client) Check(ctx context.Context, subject, text string, refs []subjectref.Reference) (bool, []string, error) {
	var out struct {
		OK       bool     `json:"is_compatible"`
		Messages []string `json:"messages"`
	}
	err := c.do(ctx, http.MethodPost, "/compatibility"+subjectPath(subject)+"/versions?verbose=true", schemaBody{SchemaType: "PROTOBUF", Schema: text, References: refs}, &out)
	return out.OK, out.Messages, err
}

// Versions lists subject's live version numbers.
func (c *Client) Versions(ctx context.Context, subject string) ([]int, error) {
	var vs []int
	err := c.do(ctx, http.MethodGet, subjectPath(subject)+"/versions", nil, &vs)
	return vs, err
}

// Version fetches one version's schema text and references
// (subjectref.Latest for the newest).
func (c *Client) Version(ctx context.Context, subject string, version int) (string, []subjectref.Reference, error) {
	which := "latest"
	if version != subjectref.Latest {
		which = strconv.Itoa(version)
	}
	var v struct {
		Schema     string                 `json:"schema"`
		References []subjectref.Reference `json:"references"`
	}
	err := c.do(ctx, http.MethodGet, subjectPath(subject)+"/versions/"+which, nil, &v)
	return v.Schema, v.References, err
}

// TLSFiles are the PEM files a client needs for a registry served over
// HTTPS with a private CA or client certificates.
type TLSFiles struct {
	// CA, when set, is the CA certificate(s) the server's certificate
	// must chain to, instead of the system's.
	CA string
	// Cert and Key, when set, are the client certificate and its key
	// presented to a registry that authenticates by certificate.
	Cert, Key string
}

// HTTPClient returns an HTTP client for f, or nil (http.DefaultClient)
// when f names no file.
func (f TLSFiles) HTTPClient() (*http.Client, error) {
	if f == (TLSFiles{}) {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if f.CA != "" {
		pem, err := os.ReadFile(f.CA)
		if err != nil {
			return nil, fmt.Errorf("--ca-file: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--ca-file %s holds no PEM certificate", f.CA)
		}
	}
	if (f.Cert == "") != (f.Key == "") {
		return nil, errors.New("--client-cert and --client-key go together: the certificate and its private key (PEM)")
	}
	if f.Cert != "" {
		c, err := tls.LoadX509KeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, fmt.Errorf("--client-cert/--client-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{c}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = cfg
	return &http.Client{Transport: tr}, nil
}
