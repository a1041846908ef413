// Package walletcrypto is the wallet's wire cryptography: P-256 keys, HPKE
// bundles, the signed OTP target bundle and request stamps, byte-compatible with
// Turnkey's SDKs. The service uses it to verify and seal; the wasm module uses it
// to generate keys, stamp and open. To keep the wasm module small it uses
// neither encoding/json nor net/http, and no fmt of its own (TestImports checks).
//
// # Keys
//
// A [PrivateKey] comes from [GenerateKey] or [NewPrivateKey] (a 32-byte scalar)
// and is dropped with [PrivateKey.Wipe]. A [PublicKey] is parsed from SEC 1 bytes
// with [ParsePublicKey], from hex with [ParsePublicKeyHex], or from a request's
// clientPublicKey with [ParseClientPublicKey]; [IsUncompressedHex] tells the
// legacy uncompressed form (session key sealed by the service) from the
// compressed one (the client's key is the session key). Stamps carry keys
// compressed ([PublicKey.CompressedHex]); HPKE receivers and enclave keys are
// uncompressed ([PublicKey.UncompressedHex]).
//
// # Bundles
//
// Every bundle is RFC 9180 base mode with DHKEM(P-256, HKDF-SHA256), HKDF-SHA256
// and AES-256-GCM, info [HPKEInfo], and AAD = enc || recipient (both 65-byte
// uncompressed points): see [Seal] and [Open]. Two wire forms exist:
//
//   - the credential bundle, base58check of the compressed enc and the ciphertext,
//     carries session keys: [SealSessionKey], [OpenSessionKey] (and the general
//     [SealCredentialBundle], [OpenCredentialBundle], [Base58CheckEncode]);
//   - the JSON form {"encappedPublic":…,"ciphertext":…} carries the OTP:
//     [Bundle], [SealBundle], [OpenBundle].
//
// # OTP login
//
// The service answers initOtp with a target bundle made by [NewTargetBundle]. The
// client checks it against a pinned signer with [VerifyTargetBundle], then seals
// the code and its own public key to the returned target with [SealOTP]. The
// service opens that with [OpenBundle] and reads it with [ParseOTPPlaintext].
//
// # Stamps
//
// A Service-Wallet-Signature header is made by [SignStamp] and checked with
// [ParseStamp] then [Stamp.Verify]. Parse failures are a [*StampError] whose
// [StampErrorReason] names the problem; high-S signatures verify.
//
// # Errors
//
// Errors wrap one of the sentinels [ErrInvalidPrivateKey], [ErrInvalidPublicKey],
// [ErrMalformed], [ErrDecrypt], [ErrSignerMismatch] and [ErrInvalidSignature], or are
// a [*StampError]; test them with [errors.Is] and [errors.As]. Only a failure of
// the platform itself (no randomness) gives an unexported internal error. Messages
// start with "walletcrypto: ".
//
// # Encodings
//
// Parsers are strict and encoders canonical: hex is written in lower case, JSON
// without whitespace and with the key order of the JavaScript SDK, DER minimally
// ([ParseDERSignature], [EncodeDERSignature]). A canonical input re-encodes to the
// same bytes.
package walletcrypto
