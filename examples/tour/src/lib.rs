//! A small inventory library.

/// One item on a shelf.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub name: String,
    pub count: u32,
}

/// A shelf of items.
pub struct Shelf {
    items: Vec<Item>,
}

impl Shelf {
    /// An empty shelf.
    pub fn new() -> Self {
        Shelf { items: Vec::new() }
    }

    /// Put `count` of `name` on the shelf.
    pub fn add(&mut self, name: &str, count: u32) {
        // TODO: merge with an existing item of the same name
        self.items.push(Item { name: name.to_string(), count });
    }

    /// How many items of any name.
    pub fn total(&self) -> u32 {
        self.items.iter().map(|i| i.count).sum()
    }
}

pub const MAX_SHELF: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn total_counts_everything() {
        let mut s = Shelf::new();
        s.add("bolt", 3);
        s.add("nut", 4);
        assert_eq!(s.total(), 7);
    }
}
