package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/msgcontract/msgcontract/registry/access"
	"github.com/msgcontract/msgcontract/registry/api"
	"github.com/msgcontract/msgcontract/registry/store"
)

// authCost loads GET /schemas/ids/1 on one store through a registry
// without access rules and through one with an access file, as anonymous
// reader, HTTP Basic user and JWT holder, in alternating rounds, and
// prints each rate and its ratio to the open registry's.
func authCost(dir string, st *store.Store, hc *http.Client, want []byte, duration time.Duration, workers int) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	set, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: string(jose.ES256)}}})
	if err != nil {
		return err
	}
	hash, err := access.HashSecret("bench-password")
	if err != nil {
		return err
	}
	doc := fmt.Sprintf(`anonymous: reader
users:
  - name: bench
    password_hash: %q
jwt:
  jwks_file: jwks.json
  issuer: https://idp.bench
  audience: registry
grants:
  - to: [user:bench, jwt:bench]
    role: reader
`, hash)
	if err := os.WriteFile(filepath.Join(dir, "jwks.json"), set, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "access.yaml"), []byte(doc), 0o600); err != nil {
		return err
	}
	guard, err := access.New(access.Config{File: filepath.Join(dir, "access.yaml")})
	if err != nil {
		return err
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", "k1"))
	if err != nil {
		return err
	}
	tok, err := jwt.Signed(signer).Claims(jwt.Claims{Issuer: "https://idp.bench", Audience: jwt.Audience{"registry"}, Subject: "bench",
		Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	if err != nil {
		return err
	}
	open, err := api.New(api.Config{Store: st})
	if err != nil {
		return err
	}
	guarded, err := api.New(api.Config{Store: st, Access: guard})
	if err != nil {
		return err
	}
	openSrv := httptest.NewServer(open)
	defer openSrv.Close()
	guardedSrv := httptest.NewServer(guard.Wrap(guarded))
	defer guardedSrv.Close()
	basicReq, _ := http.NewRequest("GET", "/", nil)
	basicReq.SetBasicAuth("bench", "bench-password")
	sides := []struct {
		name, url, auth string
		rate            float64
	}{
		{"open", openSrv.URL, "", 0},
		{"anonymous", guardedSrv.URL, "", 0},
		{"basic", guardedSrv.URL, basicReq.Header.Get("Authorization"), 0},
		{"jwt", guardedSrv.URL, "Bearer " + tok, 0},
	}
	const rounds = 6
	for i := range rounds {
		for j := range sides {
			s := &sides[(i+j)%len(sides)] // each side goes first in turn
			r, err := loadWith(hc, s.url+"/schemas/ids/1", s.auth, want, duration/rounds, workers)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.rate += r / rounds
		}
	}
	fmt.Printf("GET /schemas/ids/{id} with an access file  open: %.0f req/s   anonymous reader: %.0f   basic: %.0f   jwt: %.0f   (%d workers, %s each)\n",
		sides[0].rate, sides[1].rate, sides[2].rate, sides[3].rate, workers, duration)
	for _, s := range sides[1:] {
		fmt.Printf("ratio registry-get-%s/registry-get-open=%.2f\n", s.name, s.rate/sides[0].rate)
	}
	return nil
}
