package serviceconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"paywallet/service/atrest"
)

// legacyKeyFile is where versions before issue 14 kept the at-rest key of a
// SQLite database: beside it, so that a copy of the data directory (a
// backup, a synced folder) carried the key along with what it seals.
const legacyKeyFile = "wallet.key"

// DefaultKeyFile is where the at-rest key of the SQLite database at db is
// kept unless --data-key-file says otherwise: under the per-user
// configuration directory (os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config
// on Linux), in paywallet/keys/, in a file named after the database's
// absolute path, so that two databases never share a key by accident.
func DefaultKeyFile(db string) (string, error) {
	abs, err := filepath.Abs(db)
	if err != nil {
		return "", err
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no per-user configuration directory to keep the at-rest key in (%w); "+
			"set --data-key-file (WALLET_DATA_KEY_FILE) to a file outside the database's directory", err)
	}
	sum := sha256.Sum256([]byte(abs))
	name := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '.' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, filepath.Base(abs))
	return filepath.Join(dir, "paywallet", "keys", name+"-"+hex.EncodeToString(sum[:8])+".key"), nil
}

// dataKey finds the at-rest key and reports the file it came from: the
// --data-key flag, else --data-key-file, else (SQLite only) wallet.key
// beside the database where an earlier version made it, else
// DefaultKeyFile. PostgreSQL serves several instances, which must share one
// key, so it is never made up locally. It logs where the key is and what a
// copy of which files gives away.
func (o *Options) dataKey(log *slog.Logger) ([]byte, string, error) {
	switch {
	case o.DataKey != "":
		key, err := atrest.ParseKey(o.DataKey)
		return key, "", err
	case o.DataKeyFile != "":
		return o.loadKeyFile(log, o.DataKeyFile)
	case isPostgres(o.Database):
		return nil, "", errors.New("with PostgreSQL set --data-key (or --data-key-file) to a key every instance shares; make one with: openssl rand -hex 32")
	}
	path, err := DefaultKeyFile(o.Database)
	legacy := filepath.Join(filepath.Dir(o.Database), legacyKeyFile)
	if _, lerr := os.Lstat(legacy); lerr == nil {
		// Existing installations keep the key they sealed their data with.
		advice := "move it out of the database's directory"
		if err == nil {
			advice = "move it to " + path + " (found there by default)"
		}
		log.Warn("the at-rest key is beside the database, so a copy of that directory exposes every sealed secret: "+
			advice+", or elsewhere and name it with --data-key-file", "key_file", legacy, "database", o.Database)
		return o.loadKeyFile(log, legacy)
	}
	if err != nil {
		return nil, "", err
	}
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) && hasData(o.Database) {
		return nil, "", fmt.Errorf("the database %s holds data but its at-rest key is neither at %s nor beside it (%s), "+
			"and a new key would not open what the old one sealed: set --data-key-file (WALLET_DATA_KEY_FILE) to the key "+
			"file made for this database (a different user or $XDG_CONFIG_HOME/$HOME looks elsewhere), or --data-key",
			o.Database, path, legacy)
	}
	return o.loadKeyFile(log, path)
}

// loadKeyFile reads (or makes) the key file and logs where it is.
func (o *Options) loadKeyFile(log *slog.Logger, path string) ([]byte, string, error) {
	key, err := atrest.LoadOrCreateKeyFile(path)
	if err != nil {
		return nil, "", err
	}
	log.Info("at-rest key: wallet recovery phrases and OTP keys in the database are sealed with the key in this file; "+
		"a copy of the database alone keeps them sealed, a copy of the database and this file exposes them: back the key up apart from the database",
		"key_file", path, "database", o.Database)
	return key, path, nil
}

// hasData reports whether a SQLite database exists at db with something in
// it (in the file or still in its write-ahead log).
func hasData(db string) bool {
	for _, p := range []string{db, db + "-wal"} {
		if info, err := os.Stat(p); err == nil && info.Size() > 0 {
			return true
		}
	}
	return false
}

func isPostgres(db string) bool {
	return strings.HasPrefix(db, "postgres://") || strings.HasPrefix(db, "postgresql://")
}
