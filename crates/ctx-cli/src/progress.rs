//! A spinner on standard error for long work, shown only on a terminal and only after the
//! work has taken 200 ms, so quick commands never flicker.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long work runs before the spinner appears.
const DELAY: Duration = Duration::from_millis(200);

/// A running spinner; dropping it clears the line.
pub(crate) struct Progress {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Progress {
    /// Starts a spinner with `message` if `show`, in colour if `color` (the one `NO_COLOR`
    /// and `--color` rule of the settings), else does nothing.
    pub(crate) fn start(show: bool, color: bool, message: String) -> Progress {
        if !show {
            return Progress { stop: None, thread: None };
        }
        let (stop, rx) = mpsc::channel::<()>();
        let thread = std::thread::spawn(move || {
            if !matches!(rx.recv_timeout(DELAY), Err(RecvTimeoutError::Timeout)) {
                return;
            }
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            let template = if color {
                "{spinner:.cyan} {msg} {elapsed:.dim}"
            } else {
                "{spinner} {msg} {elapsed}"
            };
            let style = ProgressStyle::with_template(template)
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.set_message(message);
            bar.enable_steady_tick(Duration::from_millis(80));
            let _ = rx.recv();
            bar.finish_and_clear();
        });
        Progress { stop: Some(stop), thread: Some(thread) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
