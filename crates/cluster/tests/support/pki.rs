//! A test PKI made with the `openssl` command (independent of the rustls stack under test):
//! a CA, a server certificate for 127.0.0.1/localhost and client certificates, all P-256.
//! Included by path (`#[path = ".../support/pki.rs"] mod pki;`).

#![allow(dead_code, reason = "each test crate uses a part")]

use std::path::{Path, PathBuf};
use std::process::Command;

pub type PkiResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The PKI's directory: `NAME.pem` (certificate) and `NAME.key` (key, mode 0600) per name.
pub struct Pki {
    dir: PathBuf,
}

impl Pki {
    /// A PKI in `dir/pki` with CA `ca`, server certificate `server` (for 127.0.0.1 and
    /// localhost, signed by `ca`) and client certificate `client` (signed by `ca`).
    pub fn new(dir: &Path) -> PkiResult<Self> {
        let pki = Self {
            dir: dir.join("pki"),
        };
        std::fs::create_dir_all(&pki.dir)?;
        pki.ca("ca")?;
        pki.leaf(
            "server",
            "localhost",
            "ca",
            "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
             keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
        )?;
        pki.client("client", "zeppelin-worker", "ca")?;
        Ok(pki)
    }

    fn openssl(&self, args: &[&str]) -> PkiResult {
        let out = Command::new("openssl")
            .current_dir(&self.dir)
            .args(args)
            .output()?;
        if !out.status.success() {
            return Err(
                format!("openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr)).into(),
            );
        }
        Ok(())
    }

    fn private(&self, name: &str) -> PkiResult {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            self.path(&format!("{name}.key")),
            std::fs::Permissions::from_mode(0o600),
        )?;
        Ok(())
    }

    /// A self-signed CA `name`.
    pub fn ca(&self, name: &str) -> PkiResult {
        self.openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-subj",
            &format!("/O=zeppelin test/CN={name}"),
        ])?;
        self.private(name)
    }

    /// A certificate `name` for `cn`, signed by CA `ca`, with `extensions` (an openssl
    /// extension file's lines).
    pub fn leaf(&self, name: &str, cn: &str, ca: &str, extensions: &str) -> PkiResult {
        std::fs::write(self.dir.join(format!("{name}.ext")), extensions)?;
        self.openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &format!("{name}.key"),
            "-out",
            &format!("{name}.csr"),
            "-subj",
            &format!("/O=zeppelin test/CN={cn}"),
        ])?;
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &format!("{name}.csr"),
            "-CA",
            &format!("{ca}.pem"),
            "-CAkey",
            &format!("{ca}.key"),
            "-CAcreateserial",
            "-out",
            &format!("{name}.pem"),
            "-days",
            "2",
            "-extfile",
            &format!("{name}.ext"),
        ])?;
        self.private(name)
    }

    /// A client certificate `name` for common name `cn`, signed by CA `ca`.
    pub fn client(&self, name: &str, cn: &str, ca: &str) -> PkiResult {
        self.leaf(
            name,
            cn,
            ca,
            "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n",
        )
    }

    /// `dir/pki/file`.
    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.join(file)
    }

    /// A nats-server `tls { ... }` block with the server certificate; `verify`: client
    /// certificates from the CA are required (mutual TLS).
    pub fn nats_tls_block(&self, verify: bool) -> String {
        format!(
            "tls {{\n  cert_file: {:?}\n  key_file: {:?}\n  ca_file: {:?}\n  verify: {verify}\n  timeout: 5\n}}\n",
            self.path("server.pem"),
            self.path("server.key"),
            self.path("ca.pem"),
        )
    }
}
