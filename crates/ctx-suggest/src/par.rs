//! Work shared among the cores, its results kept in order.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

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

/// `f` of each of `items` on as many threads as there are cores (at most eight), started once
/// for all the items, while the calling thread passes each result to `consume` with the
/// item's place, in the items' order, as soon as it and every one before it are done. Threads
/// that live through the whole run keep what they remember per thread (the memo of stems)
/// from item to item. Items are taken from `items` one at a time, as the threads get to them,
/// so an iterator that owns its items can give back their memory as it goes. On the calling
/// thread alone when `items` says it holds fewer than `min`. A panic in `f` is raised again
/// on the calling thread.
pub(crate) fn for_each_ordered<T: Send, R: Send>(
    items: impl Iterator<Item = T> + Send,
    min: usize,
    f: impl Fn(T) -> R + Sync,
    mut consume: impl FnMut(usize, R),
) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let most = items.size_hint().1.unwrap_or(usize::MAX);
    let threads = cores.min(8).min(most);
    if threads <= 1 || most < min {
        for (k, item) in items.enumerate() {
            consume(k, f(item));
        }
        return;
    }
    // The next item with its place; a thread holds the lock only to take one.
    let source = Mutex::new(items.enumerate());
    std::thread::scope(|scope| {
        // Bounded, so that the workers stay within a few hundred items of the consumer.
        let (tx, rx) = std::sync::mpsc::sync_channel(256);
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let tx = tx.clone();
                let (source, f) = (&source, &f);
                scope.spawn(move || {
                    loop {
                        let next = source.lock().unwrap_or_else(PoisonError::into_inner).next();
                        let Some((k, item)) = next else { break };
                        if tx.send((k, f(item))).is_err() {
                            break;
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        // Workers take items in increasing order: results arrive nearly in order, and those
        // ahead of a slower one wait here.
        let mut ahead = std::collections::BTreeMap::new();
        let mut want = 0;
        for (k, result) in rx {
            ahead.insert(k, result);
            while let Some(result) = ahead.remove(&want) {
                consume(want, result);
                want += 1;
            }
        }
        for w in workers {
            if let Err(panic) = w.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
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
    fn ordered_results_reach_the_consumer_in_order() {
        let items: Vec<u64> = (0..5000).collect();
        let mut seen = Vec::new();
        super::for_each_ordered(
            items.iter(),
            1,
            |n| {
                if n % 13 == 0 {
                    std::thread::yield_now();
                }
                n * 2
            },
            |k, doubled| seen.push((k, doubled)),
        );
        let expected: Vec<(usize, u64)> = items.iter().map(|&n| (n as usize, n * 2)).collect();
        assert_eq!(seen, expected);
        let caught = std::panic::catch_unwind(|| {
            super::for_each_ordered(
                items.iter(),
                1,
                |n| assert_ne!(*n, 700, "item 700"),
                |_, ()| {},
            );
        });
        assert!(caught.is_err(), "the panic of a worker is raised again");
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
