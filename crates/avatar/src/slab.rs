//! The worker's connections, indexed by token, with a free list so tokens are reused.

/// A slot: a boxed item, or the next free slot.
pub(crate) enum Slot<T> {
    /// In use.
    Full(Box<T>),
    /// Free; the next free slot's index, or `usize::MAX`.
    Free(usize),
}

/// Connections indexed by token, with a free list so tokens are reused.
pub(crate) struct Slab<T> {
    pub(crate) slots: Vec<Slot<T>>,
    free: usize,
    pub(crate) len: usize,
}

impl<T> Slab<T> {
    pub(crate) fn new() -> Self {
        Slab {
            slots: Vec::new(),
            free: usize::MAX,
            len: 0,
        }
    }

    pub(crate) fn insert(&mut self, conn: Box<T>) -> usize {
        self.len += 1;
        if self.free != usize::MAX {
            let index = self.free;
            let Slot::Free(next) = self.slots[index] else {
                unreachable!("free list points at a full slot")
            };
            self.free = next;
            self.slots[index] = Slot::Full(conn);
            index
        } else {
            self.slots.push(Slot::Full(conn));
            self.slots.len() - 1
        }
    }

    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut T> {
        match self.slots.get_mut(index) {
            Some(Slot::Full(conn)) => Some(conn),
            _ => None,
        }
    }

    pub(crate) fn remove(&mut self, index: usize) -> Option<Box<T>> {
        match self.slots.get(index) {
            Some(Slot::Full(_)) => {
                let slot = std::mem::replace(&mut self.slots[index], Slot::Free(self.free));
                self.free = index;
                self.len -= 1;
                match slot {
                    Slot::Full(conn) => Some(conn),
                    Slot::Free(_) => None,
                }
            }
            _ => None,
        }
    }
}
