//! Trees on disk and the environment of a view over them.

use std::path::{Path, PathBuf};

use camino::Utf8PathBuf;
use ctx_agents::{Agent, Env, Home, Rules};
use ctx_fs::{Limits, RootKind, Sandbox};
use tempfile::TempDir;

/// A workspace (`ws/`) and a home folder (`home/`) in a temporary folder.
pub(crate) struct Tree {
    _dir: TempDir,
    pub(crate) ws: PathBuf,
    pub(crate) home: PathBuf,
}

impl Tree {
    pub(crate) fn new() -> Tree {
        let dir = TempDir::new().unwrap();
        let top = std::fs::canonicalize(dir.path()).unwrap();
        let ws = top.join("ws");
        let home = top.join("home");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Tree { _dir: dir, ws, home }
    }

    /// Writes a file of the workspace (`repo/CLAUDE.md`) or, with a `~/` prefix, of the home
    /// folder.
    pub(crate) fn write(&self, rel: &str, bytes: impl AsRef<[u8]>) -> &Tree {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
        self
    }

    /// Creates a folder (a `.git` marker).
    pub(crate) fn mkdir(&self, rel: &str) -> &Tree {
        std::fs::create_dir_all(self.path(rel)).unwrap();
        self
    }

    /// A symbolic link at `rel` to `target`, as written.
    pub(crate) fn link(&self, rel: &str, target: &str) -> &Tree {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, path).unwrap();
        self
    }

    pub(crate) fn path(&self, rel: &str) -> PathBuf {
        match rel.strip_prefix("~/") {
            Some(rest) => self.home.join(rest),
            None => self.ws.join(rel),
        }
    }

    /// The sandbox of the workspace, with `limits`; `home_root` also opens the home folder as
    /// a root (`--allow '~'`).
    pub(crate) fn sandbox(&self, limits: Limits, home_root: bool) -> Sandbox {
        let home = Utf8PathBuf::try_from(self.home.clone()).unwrap();
        let mut builder =
            Sandbox::builder(self.ws.to_str().unwrap()).limits(limits).home(Some(home));
        if home_root {
            builder = builder.root("~", RootKind::Home);
        }
        builder.open(cap_std::ambient_authority()).unwrap()
    }

    /// The user's agent folders that exist, each a sandbox of its own, as the facade opens
    /// them; and `~/.claude.json`.
    pub(crate) fn home(&self) -> Home {
        home_of(&self.home)
    }
}

/// The agent folders of `home` that exist, each opened as a sandbox of its own.
pub(crate) fn home_of(home: &Path) -> Home {
    let mut out = Home::none();
    let mut keys: Vec<&str> =
        Agent::ALL.iter().flat_map(|a| a.home_folders().iter().copied()).collect();
    keys.sort_unstable();
    keys.dedup();
    for key in keys {
        let dir = home.join(key);
        if !dir.is_dir() {
            continue;
        }
        let sandbox =
            Sandbox::builder(dir.to_str().unwrap()).open(cap_std::ambient_authority()).unwrap();
        out.add_folder(key, format!("~/{key}"), dir.to_str().unwrap(), sandbox);
    }
    if let Ok(text) = std::fs::read_to_string(home.join(".claude.json")) {
        out.set_claude_settings(&text);
    }
    out
}

/// The view of `agent` from `cwd`, for `file`.
pub(crate) fn view(
    sandbox: &Sandbox,
    home: &Home,
    agent: Agent,
    cwd: &str,
    file: Option<&str>,
) -> Rules {
    let mut env = Env::new(sandbox, home).cwd(cwd).unwrap();
    if let Some(file) = file {
        env = env.for_path(file).unwrap();
    }
    ctx_agents::read(agent, &env)
}
