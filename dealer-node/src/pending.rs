//! The budget of connections not yet authenticated (TCP accepted, TLS, the
//! WebSocket upgrade and the 4-step handshake), per source address and
//! node-wide. A newcomer beyond either budget is never refused: it takes the
//! place of the connection that has waited longest (of its address, or of
//! the node), which is closed. An honest handshake takes a few round trips;
//! sockets left idle to fill the budget are always the oldest, so a flood
//! of them cannot keep newcomers out.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::oneshot;

/// Pre-handshake connections, oldest first.
pub struct PendingBudget {
    per_addr: usize,
    total: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    next: u64,
    /// Every pending connection by arrival (lower = older).
    all: BTreeMap<u64, (IpAddr, oneshot::Sender<()>)>,
    /// Arrivals per address, oldest first.
    by_addr: HashMap<IpAddr, BTreeMap<u64, ()>>,
}

impl Inner {
    fn remove(&mut self, id: u64) -> Option<oneshot::Sender<()>> {
        let (ip, tx) = self.all.remove(&id)?;
        if let Some(m) = self.by_addr.get_mut(&ip) {
            m.remove(&id);
            if m.is_empty() {
                self.by_addr.remove(&ip);
            }
        }
        Some(tx)
    }
}

/// A place in the budget, held until the handshake ends (drop).
pub struct PendingTicket {
    budget: Arc<PendingBudget>,
    id: u64,
    evicted: Option<oneshot::Receiver<()>>,
}

impl PendingTicket {
    /// Resolves when a newcomer took this connection's place.
    pub async fn evicted(&mut self) {
        match self.evicted.as_mut() {
            Some(rx) => {
                let _ = rx.await;
            }
            None => std::future::pending().await,
        }
    }
}

impl Drop for PendingTicket {
    fn drop(&mut self) {
        self.budget.lock().remove(self.id);
    }
}

impl PendingBudget {
    /// A budget of `per_addr` connections per source address and `total`
    /// in all (each at least 1).
    pub fn new(per_addr: usize, total: usize) -> Arc<PendingBudget> {
        Arc::new(PendingBudget { per_addr: per_addr.max(1), total: total.max(1), inner: Mutex::default() })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Admits a connection from `ip`, closing the oldest pending connection
    /// of its address (or of the node) when a budget is full. Returns the
    /// ticket and how many connections were evicted for it.
    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> (PendingTicket, usize) {
        let mut g = self.lock();
        let mut evicted = 0;
        let oldest_of_addr =
            g.by_addr.get(&ip).filter(|m| m.len() >= self.per_addr).and_then(|m| m.keys().next().copied());
        if let Some(old) = oldest_of_addr {
            if let Some(tx) = g.remove(old) {
                let _ = tx.send(());
                evicted += 1;
            }
        }
        while g.all.len() >= self.total {
            let Some(old) = g.all.keys().next().copied() else { break };
            if let Some(tx) = g.remove(old) {
                let _ = tx.send(());
                evicted += 1;
            }
        }
        let id = g.next;
        g.next += 1;
        let (tx, rx) = oneshot::channel();
        g.all.insert(id, (ip, tx));
        g.by_addr.entry(ip).or_default().insert(id, ());
        drop(g);
        (PendingTicket { budget: Arc::clone(self), id, evicted: Some(rx) }, evicted)
    }

    /// Connections pending now (all addresses).
    pub fn len(&self) -> usize {
        self.lock().all.len()
    }

    /// Whether none is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(n: u8) -> IpAddr {
        IpAddr::from([127, 0, 0, n])
    }

    #[tokio::test]
    async fn a_newcomer_beyond_a_budget_closes_the_oldest_not_itself() {
        let b = PendingBudget::new(2, 3);
        let (mut a1, e) = b.admit(ip(2));
        assert_eq!(e, 0);
        let (mut a2, _) = b.admit(ip(2));
        // Address 2 is at its budget: its oldest (a1) goes.
        let (_a3, e) = b.admit(ip(2));
        assert_eq!(e, 1);
        a1.evicted().await;
        // Node-wide budget of 3: a newcomer from address 9 closes the node's oldest (a2).
        let (_c1, _) = b.admit(ip(3));
        assert_eq!(b.len(), 3);
        let (_n, e) = b.admit(ip(9));
        assert_eq!(e, 1);
        a2.evicted().await;
        assert_eq!(b.len(), 3);
    }

    #[test]
    fn a_finished_handshake_gives_its_place_back() {
        let b = PendingBudget::new(1, 1);
        let (t, _) = b.admit(ip(2));
        drop(t);
        assert!(b.is_empty());
        let (_t, e) = b.admit(ip(2));
        assert_eq!(e, 0);
    }
}
