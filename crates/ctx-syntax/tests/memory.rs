//! The scanner's memory: peak heap per input byte, measured with a counting allocator in a
//! test binary of its own (the allocator is global, so no other test shares it).

// A global allocator is an unsafe trait; this test binary forwards every call to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only counters move.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let live = LIVE.fetch_add(new_size - layout.size(), Ordering::Relaxed)
                + (new_size - layout.size());
            PEAK.fetch_max(live, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak heap bytes above what was live before while scanning `text`, and the number of items.
fn peak_of_scan(text: &str) -> (usize, usize) {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let scan = ctx_syntax::scan(text);
    let items = scan.items.len();
    drop(scan);
    (PEAK.load(Ordering::Relaxed) - before, items)
}

/// The counters are global, so the measurements run one after the other in one test.
#[test]
fn scanner_memory() {
    prose_costs_a_fixed_base();
    dense_text_costs_only_its_items();
}

/// Text without mentions costs a fixed amount whatever its length: items are spans into the
/// input, never copies of it.
fn prose_costs_a_fixed_base() {
    let prose = "plain words and more words with no mention in them at all\n".repeat(20_000);
    let (peak, items) = peak_of_scan(&prose);
    assert_eq!(items, 1);
    assert!(peak <= 4096, "{peak} bytes for {} bytes of prose", prose.len());
}

/// Dense text (four items in ten bytes) costs the item list and nothing else: at most twice
/// its final size while the list grows, plus a fixed base.
fn dense_text_costs_only_its_items() {
    let dense = "@a @[b] x\n".repeat(100_000);
    let (peak, items) = peak_of_scan(&dense);
    assert_eq!(items, 400_000);
    let bound = 2 * items * size_of::<ctx_syntax::Item<'_>>() + 65_536;
    assert!(peak <= bound, "{peak} bytes for {} bytes, bound {bound}", dense.len());
}
