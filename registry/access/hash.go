package access

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// argon2id parameters for new hashes: OWASP's recommended minimum
// (19 MiB, 2 passes, 1 lane). Verifying reads them from the hash, so
// raising them later keeps old hashes valid.
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// HashSecret returns the argon2id hash of secret in the PHC string format
// ("$argon2id$v=19$m=…,t=…,p=…$salt$key"), what the access file stores.
func HashSecret(secret string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(secret), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// hashLike reports whether s looks like a hash VerifySecret reads.
func hashLike(s string) bool {
	return strings.HasPrefix(s, "$argon2id$") || strings.HasPrefix(s, "$2a$") || strings.HasPrefix(s, "$2b$") || strings.HasPrefix(s, "$2y$")
}

// VerifySecret reports whether secret matches hash, an argon2id PHC
// string or a bcrypt hash, in time that does not depend on where they
// differ.
func VerifySecret(hash, secret string) (bool, error) {
	if strings.HasPrefix(hash, "$argon2id$") {
		return verifyArgon2id(hash, secret)
	}
	if hashLike(hash) {
		err := bcrypt.CompareHashAndPassword([]byte(hash), []byte(secret))
		if errors.Is(err, bcrypt.ErrMismatchedHashAndPassword) {
			return false, nil
		}
		return err == nil, err
	}
	return false, errors.New("not an argon2id or bcrypt hash")
}

func verifyArgon2id(hash, secret string) (bool, error) {
	parts := strings.Split(hash, "$")
	// "", "argon2id", "v=19", "m=…,t=…,p=…", salt, key
	if len(parts) != 6 {
		return false, errors.New("malformed argon2id hash: want $argon2id$v=19$m=M,t=T,p=P$SALT$KEY")
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, fmt.Errorf("argon2id hash of version %q; this build reads v=%d", parts[2], argon2.Version)
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, fmt.Errorf("malformed argon2id parameters %q", parts[3])
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, fmt.Errorf("malformed argon2id salt: %w", err)
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return false, errors.New("malformed argon2id key")
	}
	got := argon2.IDKey([]byte(secret), salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// TokenPrefix starts every token NewToken makes, so secret scanners
// recognise them.
const TokenPrefix = "mct_"

// NewToken returns a new random bearer token "mct_<id>_<secret>" and its
// id, the part the access file keys it by.
func NewToken() (token, id string, err error) {
	b := make([]byte, 6+32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	enc := base64.RawURLEncoding
	id = strings.NewReplacer("_", "x", "-", "y").Replace(enc.EncodeToString(b[:6]))
	return TokenPrefix + id + "_" + enc.EncodeToString(b[6:]), id, nil
}

// tokenID returns the id of a token NewToken made, or "".
func tokenID(token string) string {
	rest, ok := strings.CutPrefix(token, TokenPrefix)
	if !ok {
		return ""
	}
	id, _, ok := strings.Cut(rest, "_")
	if !ok {
		return ""
	}
	return id
}
