package api

import (
	"mime"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"
)

// The media types of Confluent's REST API. A request body may be sent as
// any of bodyTypes (a missing Content-Type reads as octet-stream, as in
// Confluent); an answer is sent as the answerTypes entry the Accept header
// prefers, the client's weights first, then the server's (qs).
var (
	bodyTypes   = []string{ContentType, "application/vnd.schemaregistry+json", "application/json", "application/octet-stream"}
	answerTypes = []struct {
		name string
		qs   float64
	}{{ContentType, 1}, {"application/vnd.schemaregistry+json", 0.9}, {"application/json", 0.5}}
)

// answerTypeKey holds the media type negotiated for a request's answer.
const answerTypeKey = "msgcontract.answerType"

// negotiate refuses request bodies of other media types (415) and picks
// the answer's media type from Accept (406 when none is acceptable).
// The plain-text endpoints (…/schema) and the OpenAPI document answer
// their own type whatever is asked.
func negotiate(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if hasBody(r) {
			if ct := r.Header.Get(echo.HeaderContentType); ct != "" {
				mt, _, err := mime.ParseMediaType(ct)
				if err != nil || !contains(bodyTypes, mt) {
					return apiErr(http.StatusUnsupportedMediaType, http.StatusUnsupportedMediaType,
						"HTTP 415 Unsupported Media Type: the request body is %q; send it as %s", ct, strings.Join(bodyTypes[:3], ", "))
				}
			}
		}
		p := strings.TrimSuffix(r.URL.Path, "/")
		if strings.HasSuffix(p, "/schema") || p == "/openapi.json" {
			return next(c)
		}
		t, ok := pickAnswerType(r.Header.Values(echo.HeaderAccept))
		if !ok {
			return apiErr(http.StatusNotAcceptable, http.StatusNotAcceptable,
				"HTTP 406 Not Acceptable: this registry answers %s, %s or %s; the request accepts none of them (Accept: %s)",
				answerTypes[0].name, answerTypes[1].name, answerTypes[2].name, strings.Join(r.Header.Values(echo.HeaderAccept), ", "))
		}
		c.Set(answerTypeKey, t)
		return next(c)
	}
}

// hasBody reports a request that carries a body.
func hasBody(r *http.Request) bool {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		return false
	}
	return r.ContentLength > 0 || (r.ContentLength < 0 && r.Body != nil && r.Body != http.NoBody)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// acceptRange is one media range of an Accept header.
type acceptRange struct {
	typ, sub string
	q        float64
}

// pickAnswerType is the answer type the Accept header values prefer; no
// header accepts everything. A malformed range is skipped.
func pickAnswerType(values []string) (string, bool) {
	var ranges []acceptRange
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			typ, sub, ok := strings.Cut(mt, "/")
			if !ok {
				continue
			}
			q := 1.0
			if s, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(s, 64); err == nil && f >= 0 && f <= 1 {
					q = f
				}
			}
			ranges = append(ranges, acceptRange{typ, sub, q})
		}
	}
	if len(ranges) == 0 {
		return ContentType, true
	}
	type offer struct {
		name  string
		q, qs float64
	}
	var offers []offer
	for _, at := range answerTypes {
		typ, sub, _ := strings.Cut(at.name, "/")
		// The most specific range that matches decides the weight.
		best, spec := -1.0, -1
		for _, r := range ranges {
			s := -1
			switch {
			case r.typ == typ && r.sub == sub:
				s = 2
			case r.typ == typ && r.sub == "*":
				s = 1
			case r.typ == "*" && r.sub == "*":
				s = 0
			}
			if s > spec {
				best, spec = r.q, s
			}
		}
		if best > 0 {
			offers = append(offers, offer{at.name, best, at.qs})
		}
	}
	if len(offers) == 0 {
		return "", false
	}
	sort.SliceStable(offers, func(i, j int) bool {
		if offers[i].q != offers[j].q {
			return offers[i].q > offers[j].q
		}
		return offers[i].qs > offers[j].qs
	})
	return offers[0].name, true
}

// answerType is the media type negotiated for c's answer.
func answerType(c echo.Context) string {
	if t, ok := c.Get(answerTypeKey).(string); ok {
		return t
	}
	return ContentType
}
