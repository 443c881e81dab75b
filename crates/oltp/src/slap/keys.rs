//! The primary keys keyed queries pick from: read back after the population
//! (`SELECT id from t1`, with [`Connection::column`](crate::Connection::column) on a
//! connection to the schema), one random key per keyed statement.

/// The key mysqlslap uses when it does not read keys (`--only-print`, the blackhole
/// engine, which keeps no rows).
pub const PLACEHOLDER_KEY: &str = "796c4422-1d94-102a-9d6d-00e0812d";

/// The statement mysqlslap reads the keys with.
pub const KEY_QUERY: &str = "SELECT id from t1";

/// Keys packed in one buffer (a population of millions of rows would otherwise cost an
/// allocation per key).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    text: String,
    ends: Vec<usize>,
}

impl Keys {
    pub fn one(key: &str) -> Self {
        let mut k = Keys::default();
        k.push(key);
        k
    }

    pub fn push(&mut self, key: &str) {
        self.text.push_str(key);
        self.ends.push(self.text.len());
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    pub fn get(&self, i: usize) -> &str {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_keys_read_back() {
        let mut k = Keys::default();
        for s in ["1", "22", "", "abc"] {
            k.push(s);
        }
        assert_eq!(k.len(), 4);
        assert_eq!(
            (0..4).map(|i| k.get(i)).collect::<Vec<_>>(),
            ["1", "22", "", "abc"]
        );
    }
}
