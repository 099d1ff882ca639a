//! The signed assertion a machine client authenticates with at the token endpoint (`private_key_jwt`, RFC 7523):
//! a JWT whose issuer and subject are the client id and whose audience is the authorization server, signed with the
//! client's private key (PKCS#8 PEM: EC P-256 signs ES256, RSA signs RS256). The key never leaves this module in any
//! form but the signature.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, RSA_PKCS1_SHA256, RsaKeyPair};

/// How long an assertion is valid: it is used at once.
const LIFETIME_SECS: u64 = 300;

/// A fresh assertion for `client_id` to present to `audience`, signed with the key in `pem`.
pub(crate) fn assertion(pem: &str, client_id: &str, audience: &str) -> Result<String, String> {
    let der = pkcs8_der(pem)?;
    let rng = SystemRandom::new();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_err(|_| "the clock is before 1970".to_string())?
        .as_secs();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + LIFETIME_SECS,
        "jti": format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..)),
    });
    let key = Key::from_pkcs8(&der, &rng)?;
    let header = serde_json::json!({"alg": key.alg(), "typ": "JWT"});
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key.sign(signing_input.as_bytes(), &rng)?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

/// A client's signing key.
enum Key {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl Key {
    fn from_pkcs8(der: &[u8], rng: &SystemRandom) -> Result<Self, String> {
        if let Ok(key) = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, rng) {
            return Ok(Key::Ec(key));
        }
        RsaKeyPair::from_pkcs8(der)
            .map(Key::Rsa)
            .map_err(|_| "the private key is neither an EC P-256 nor an RSA key in PKCS#8".to_string())
    }

    fn alg(&self) -> &'static str {
        match self {
            Key::Ec(_) => "ES256",
            Key::Rsa(_) => "RS256",
        }
    }

    fn sign(&self, data: &[u8], rng: &SystemRandom) -> Result<Vec<u8>, String> {
        let failed = |_| "cannot sign the client assertion".to_string();
        match self {
            Key::Ec(key) => key.sign(rng, data).map(|s| s.as_ref().to_vec()).map_err(failed),
            Key::Rsa(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(&RSA_PKCS1_SHA256, rng, data, &mut signature).map_err(failed)?;
                Ok(signature)
            }
        }
    }
}

/// The DER bytes of the PKCS#8 key in `pem` (`-----BEGIN PRIVATE KEY-----`).
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, String> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != "-----BEGIN PRIVATE KEY-----")
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        return Err("the private key file holds no PKCS#8 key (-----BEGIN PRIVATE KEY-----)".into());
    }
    STANDARD
        .decode(body)
        .map_err(|_| "the private key file is not valid PEM".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair as _, UnparsedPublicKey};

    #[test]
    fn an_ec_key_signs_an_es256_assertion_that_verifies() {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der.as_ref())
        );
        let jwt = assertion(&pem, "machine", "https://as.example").unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let header: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).unwrap()).unwrap();
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(header["alg"], "ES256");
        assert_eq!(
            (&claims["iss"], &claims["sub"], &claims["aud"]),
            (&"machine".into(), &"machine".into(), &"https://as.example".into())
        );
        let key = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der.as_ref(), &rng).unwrap();
        let public = UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.public_key().as_ref());
        let signed = format!("{}.{}", parts[0], parts[1]);
        public
            .verify(signed.as_bytes(), &URL_SAFE_NO_PAD.decode(parts[2]).unwrap())
            .unwrap();
    }

    #[test]
    fn a_file_without_a_key_is_refused() {
        assert!(assertion("hello", "c", "a").unwrap_err().contains("no PKCS#8 key"));
        assert!(
            assertion("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", "c", "a")
                .unwrap_err()
                .contains("neither")
        );
    }
}
