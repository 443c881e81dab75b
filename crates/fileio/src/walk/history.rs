//! The writes a verifying job has not read back yet (fio's io_hist): in the order written
//! when the job keeps a random map (no block is written twice in a round), otherwise by
//! file and offset, a later write replacing the earlier ones it overlaps (fio keeps those
//! in a tree, log_io_piece).

use std::collections::{BTreeMap, VecDeque};

use crate::pattern::Io;

pub(super) enum History {
    InOrder(VecDeque<Io>),
    /// (file, offset) to length; no two entries overlap.
    ByOffset(BTreeMap<(u32, u64), u32>),
}

impl History {
    pub(super) fn new(in_order: bool) -> History {
        if in_order {
            History::InOrder(VecDeque::new())
        } else {
            History::ByOffset(BTreeMap::new())
        }
    }

    pub(super) fn push(&mut self, io: Io) {
        match self {
            History::InOrder(q) => q.push_back(io),
            History::ByOffset(tree) => {
                let end = io.offset + io.len as u64;
                // Earlier writes that overlap this one (the tree holds no overlaps): the
                // one starting before it if it reaches into it, and those starting inside.
                if let Some((&k, &len)) = tree.range((io.file, 0)..(io.file, io.offset)).next_back()
                {
                    if k.1 + len as u64 > io.offset {
                        tree.remove(&k);
                    }
                }
                while let Some((&k, _)) = tree.range((io.file, io.offset)..(io.file, end)).next() {
                    tree.remove(&k);
                }
                tree.insert((io.file, io.offset), io.len);
            }
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            History::InOrder(q) => q.len(),
            History::ByOffset(tree) => tree.len(),
        }
    }

    /// The first write to read back, taken out.
    pub(super) fn pop_first(&mut self) -> Option<Io> {
        match self {
            History::InOrder(q) => q.pop_front(),
            History::ByOffset(tree) => {
                tree.pop_first()
                    .map(|((file, offset), len)| Io { file, offset, len })
            }
        }
    }

    /// Everything left, in the order it is read back; the history is empty after.
    pub(super) fn take_all(&mut self) -> Vec<Io> {
        let mut all = Vec::with_capacity(self.len());
        while let Some(io) = self.pop_first() {
            all.push(io);
        }
        all
    }
}
