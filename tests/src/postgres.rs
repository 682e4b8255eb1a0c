//! A throwaway PostgreSQL for the fleet tests: Debian's server binaries, a cluster made with
//! `initdb` in a temp directory (as the `postgres` user when the tests run as root, as initdb
//! refuses root), listening on loopback only, stopped and removed on drop. No mock.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context as _};

/// A running PostgreSQL.
pub struct Postgres {
    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub url: String,
    bin: PathBuf,
    dir: PathBuf,
    as_postgres: bool,
}

/// The newest installed server's binaries (`/usr/lib/postgresql/N/bin`).
fn server_bin() -> anyhow::Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .context("PostgreSQL is not installed (Debian's postgresql package; test.sh installs it)")?
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.file_name().to_string_lossy().parse().ok()?, e.path().join("bin"))))
        .filter(|(_, p)| p.join("initdb").is_file())
        .collect();
    versions.sort();
    versions.pop().map(|v| v.1).context("no PostgreSQL server binaries under /usr/lib/postgresql")
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

impl Postgres {
    fn run(&self, program: &str, args: &[&str]) -> anyhow::Result<String> {
        let exe = self.bin.join(program);
        let out = if self.as_postgres {
            Command::new("runuser").args(["-u", "postgres", "--"]).arg(&exe).args(args).output()
        } else {
            Command::new(&exe).args(args).output()
        }
        .with_context(|| format!("running {}", exe.display()))?;
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        if !out.status.success() {
            bail!("{program} {}: {text}", args.join(" "));
        }
        Ok(text)
    }

    /// Makes a cluster and starts it on a free loopback port.
    pub fn start() -> anyhow::Result<Self> {
        let bin = server_bin()?;
        let as_postgres = is_root();
        let dir = std::env::temp_dir().join(format!("gpudash-pg-{}-{}", std::process::id(), crate::free_port()));
        std::fs::create_dir_all(&dir)?;
        if as_postgres {
            let ok = Command::new("chown").args(["postgres:postgres"]).arg(&dir).status()?.success();
            if !ok {
                bail!("cannot give {} to the postgres user", dir.display());
            }
        }
        let port = crate::free_port();
        let pg = Self { url: format!("postgres://postgres@127.0.0.1:{port}/postgres"), bin, dir, as_postgres };
        let data = pg.dir.join("data");
        let (d, log) = (data.display().to_string(), pg.dir.join("log").display().to_string());
        pg.run("initdb", &["-D", &d, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"])?;
        let opts = format!(
            "-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={} -c fsync=off -c full_page_writes=off",
            pg.dir.display()
        );
        pg.run("pg_ctl", &["-D", &d, "-l", &log, "-o", &opts, "-w", "-t", "60", "start"])?;
        Ok(pg)
    }

    /// The data directory's size on disk, bytes.
    pub fn disk_bytes(&self) -> u64 {
        fn walk(p: &Path) -> u64 {
            std::fs::read_dir(p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => walk(&e.path()),
                    Ok(m) => m.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        walk(&self.dir.join("data"))
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let d = self.dir.join("data").display().to_string();
        let _ = self.run("pg_ctl", &["-D", &d, "-m", "immediate", "-w", "stop"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
