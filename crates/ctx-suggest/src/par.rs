//! Work shared among the cores, its results kept in order.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of each of `items`, in their order, computed on as many threads as there are cores
/// (at most eight), each taking the next item when it finishes one; on the calling thread
/// alone for fewer than `min` items. A panic in `f` is raised again on the calling thread.
pub(crate) fn map<T: Sync, R: Send>(items: &[T], min: usize, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(8).min(items.len());
    if threads <= 1 || items.len() < min {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    // Each thread takes items in increasing order; their results are put back in place.
    let taken: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(k) else { break done };
                        done.push((k, f(item)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
            .collect()
    });
    let mut out: Vec<Option<R>> = (0..items.len()).map(|_| None).collect();
    for (k, result) in taken {
        out[k] = Some(result);
    }
    out.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_keep_the_order_of_the_items() {
        let items: Vec<u64> = (0..1000).collect();
        let squares = super::map(&items, 1, |n| {
            // Uneven work, so that threads finish out of order.
            if n % 7 == 0 {
                std::thread::yield_now();
            }
            n * n
        });
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert_eq!(super::map(&items[..3], 64, |n| n + 1), [1, 2, 3]);
    }

    #[test]
    fn a_panic_reaches_the_caller() {
        let items: Vec<u32> = (0..1000).collect();
        let caught = std::panic::catch_unwind(|| {
            super::map(&items, 1, |n| assert_ne!(*n, 500, "item 500"));
        });
        let payload = caught.expect_err("the panic of a worker is raised again");
        let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("item 500"), "{message}");
    }
}
