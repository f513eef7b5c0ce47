//! Operator key files of the chain providers: readable by their owner only.

use std::path::Path;

/// Reads a key file after checking that group and others have no access
/// (mode 0600 or 0400); the error says why, naming the file.
pub fn read_private(path: &Path) -> Result<zeroize::Zeroizing<String>, String> {
    let shown = path.display();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode =
            std::fs::metadata(path).map_err(|e| format!("key file {shown}: {e}"))?.permissions().mode();
        if mode & 0o077 != 0 {
            return Err(format!(
                "key file {shown} has mode {:o}: group and others must have no access (chmod 600)",
                mode & 0o777
            ));
        }
    }
    Ok(zeroize::Zeroizing::new(std::fs::read_to_string(path).map_err(|e| format!("key file {shown}: {e}"))?))
}
