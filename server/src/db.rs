//! The SQLite history database: one pool, WAL, migrations from `migrations/` at start-up.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;
use thiserror::Error;

/// Why the database could not be opened.
#[derive(Debug, Error)]
pub enum DbError {
    /// The directory could not be created.
    #[error("cannot create directory {0}: {1}")]
    Dir(PathBuf, #[source] std::io::Error),
    /// SQLite refused to open the file.
    #[error("cannot open {0}: {1}")]
    Open(PathBuf, #[source] sqlx::Error),
    /// The file is not an SQLite database, or is damaged.
    #[error("{0} is not a usable SQLite database: {1}")]
    Corrupt(PathBuf, #[source] sqlx::Error),
    /// The schema could not be brought up to date (corrupt file, or written by a newer gpudash).
    #[error("cannot migrate {0}: {1} (a corrupt file, or one written by a newer gpudash)")]
    Migrate(PathBuf, #[source] sqlx::migrate::MigrateError),
}

/// The default database path: `$XDG_DATA_HOME/gpudash/<file>` or `~/.local/share/gpudash/<file>`.
pub fn default_path(file: &str) -> PathBuf {
    let base = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("gpudash").join(file)
}

/// Opens (creating if missing) and migrates the database.
pub async fn open(path: &Path) -> Result<SqlitePool, DbError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| DbError::Dir(dir.to_path_buf(), e))?;
    }
    let opts = SqliteConnectOptions::from_str("sqlite://")
        .map_err(|e| DbError::Open(path.to_path_buf(), e))?
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(std::time::Duration::from_secs(5));
    let pool = SqlitePoolOptions::new().max_connections(4).connect_with(opts).await.map_err(|e| match &e {
        // SQLITE_NOTADB (26) and SQLITE_CORRUPT (11): the file is there but damaged.
        sqlx::Error::Database(d) if matches!(d.code().as_deref(), Some("26") | Some("11")) => {
            DbError::Corrupt(path.to_path_buf(), e)
        }
        _ => DbError::Open(path.to_path_buf(), e),
    })?;
    sqlx::migrate!("../migrations").run(&pool).await.map_err(|e| DbError::Migrate(path.to_path_buf(), e))?;
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_new_database_is_created_and_migrated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/history.db");
        let pool = open(&path).await.unwrap();
        let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode").fetch_one(&pool).await.unwrap();
        assert_eq!(mode, "wal");
        pool.close().await;
        // Reopening an up-to-date database is a no-op.
        assert!(open(&path).await.is_ok());
    }

    #[tokio::test]
    async fn an_unwritable_path_is_a_clear_error() {
        let err = open(Path::new("/proc/gpudash/history.db")).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(err.starts_with("cannot create directory /proc/gpudash"), "{err}");
    }

    #[tokio::test]
    async fn a_file_that_is_not_sqlite_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk.db");
        std::fs::write(&path, vec![0x42u8; 8192]).unwrap();
        assert!(open(&path).await.is_err());
    }
}
