//! The HTTP port's connection guard: budgets and deadlines that hyper, as
//! `axum::serve` runs it, does not have.
//!
//! - **Connections**: at most `http_max_conns_per_addr` per source address
//!   (checked first: beyond it a socket gets `503` and is closed at once) and
//!   `http_max_connections` in all. A newcomer beyond the node-wide cap
//!   closes the connection idle longest (no request in progress); with none
//!   idle it is refused like the others. A flood from a few addresses
//!   therefore never keeps an honest newcomer out.
//! - **Header deadline**: from a request's first byte to the end of its
//!   headers, `http_header_timeout`; a slower request (slow loris) has its
//!   connection closed.
//! - **Body deadline**: from the end of the headers to the end of the body,
//!   `http_body_timeout`; a handler reading a slower body gets an error
//!   (`400`) and the connection is closed.
//! - **Idle deadline**: a connection with no request in progress that read
//!   and wrote nothing for `http_idle_timeout` is closed (keep-alive idle, a
//!   socket that never sends), and so is one whose answer waits that long
//!   for a reader that stopped reading.
//!
//! The listener ([`GuardedListener`]) counts and admits sockets; each socket
//! is a [`GuardedIo`] that enforces the read and write deadlines; the
//! middleware [`request`] tells it when a request has been read (and ends
//! it), and puts the body deadline on the request body.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::connect_info::{ConnectInfo, Connected};
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use axum::serve::{IncomingStream, Listener};
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

use crate::Limits;

/// The HTTP port's budgets and deadlines (the `http_*` fields of [`Limits`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpLimits {
    /// A request's first byte to the end of its headers.
    pub header_timeout: Duration,
    /// The end of a request's headers to the end of its body.
    pub body_timeout: Duration,
    /// Nothing read or written, no request in progress.
    pub idle_timeout: Duration,
    /// Open connections, node-wide.
    pub max_connections: usize,
    /// Open connections per source address.
    pub max_conns_per_addr: usize,
}

impl HttpLimits {
    /// The HTTP limits of `l`.
    pub fn of(l: &Limits) -> HttpLimits {
        HttpLimits {
            header_timeout: l.http_header_timeout,
            body_timeout: l.http_body_timeout,
            idle_timeout: l.http_idle_timeout,
            max_connections: l.http_max_connections,
            max_conns_per_addr: l.http_max_conns_per_addr,
        }
    }
}

impl Default for HttpLimits {
    fn default() -> HttpLimits {
        HttpLimits::of(&Limits::default())
    }
}

/// Locks `m`, also after a panic elsewhere (the state stays consistent:
/// every update is a few field writes).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The open connections.
struct Book {
    per_addr: HashMap<IpAddr, usize>,
    open: HashMap<u64, Arc<Conn>>,
    next_id: u64,
}

/// The node's HTTP connection budget.
struct Guard {
    limits: HttpLimits,
    book: Mutex<Book>,
}

/// Why a socket was not admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    PerAddr,
    Full,
}

impl Guard {
    /// Counts a socket from `ip` in, closing the longest-idle connection if
    /// the node-wide budget is full.
    fn admit(&self, ip: IpAddr) -> Result<Arc<Conn>, Refusal> {
        let mut book = lock(&self.book);
        if book.per_addr.get(&ip).copied().unwrap_or(0) >= self.limits.max_conns_per_addr {
            return Err(Refusal::PerAddr);
        }
        if book.open.len() >= self.limits.max_connections {
            let victim = book
                .open
                .values()
                .filter_map(|c| {
                    let st = lock(&c.state);
                    (st.in_flight == 0).then(|| (st.head_since.unwrap_or(st.last_io), c.id))
                })
                .min()
                .map(|(_, id)| id);
            let Some(victim) = victim.and_then(|id| book.open.remove(&id)) else {
                return Err(Refusal::Full);
            };
            Book::forget_addr(&mut book.per_addr, victim.ip);
            victim.evict();
        }
        book.next_id += 1;
        let conn = Arc::new(Conn {
            id: book.next_id,
            ip,
            limits: self.limits,
            state: Mutex::new(ConnState {
                in_flight: 0,
                head_since: None,
                last_io: Instant::now(),
                evicted: false,
                read_waker: None,
            }),
        });
        book.open.insert(conn.id, Arc::clone(&conn));
        *book.per_addr.entry(ip).or_insert(0) += 1;
        Ok(conn)
    }

    /// A connection closed (unless it was already counted out when evicted).
    fn release(&self, conn: &Conn) {
        let mut book = lock(&self.book);
        if book.open.remove(&conn.id).is_some() {
            Book::forget_addr(&mut book.per_addr, conn.ip);
        }
    }
}

impl Book {
    fn forget_addr(per_addr: &mut HashMap<IpAddr, usize>, ip: IpAddr) {
        if let Some(n) = per_addr.get_mut(&ip) {
            *n -= 1;
            if *n == 0 {
                per_addr.remove(&ip);
            }
        }
    }
}

/// One admitted connection, shared by its socket and its requests.
pub struct Conn {
    id: u64,
    ip: IpAddr,
    limits: HttpLimits,
    state: Mutex<ConnState>,
}

struct ConnState {
    /// Requests handed to the router and not answered yet.
    in_flight: usize,
    /// When the first byte of a request not yet handed over was read.
    head_since: Option<Instant>,
    /// The last byte read or written, or the last answer.
    last_io: Instant,
    /// Closed to make room for a newcomer.
    evicted: bool,
    /// Woken on eviction.
    read_waker: Option<Waker>,
}

/// Which deadline ran out.
#[derive(Debug, Clone, Copy)]
enum Deadline {
    Header,
    Idle,
    Write,
}

impl Deadline {
    fn error(self) -> io::Error {
        let what = match self {
            Deadline::Header => "HTTP request headers not received within the header deadline",
            Deadline::Idle => "HTTP connection idle past the idle timeout",
            Deadline::Write => "HTTP answer not read by the peer within the idle timeout",
        };
        io::Error::new(io::ErrorKind::TimedOut, what)
    }
}

impl Conn {
    /// The read deadline that applies now: none while a request is in
    /// progress (its body has its own), the header deadline while a request
    /// is arriving, the idle deadline otherwise.
    fn read_deadline(&self, st: &ConnState) -> Option<(Instant, Deadline)> {
        if st.in_flight > 0 {
            None
        } else if let Some(t) = st.head_since {
            Some((t + self.limits.header_timeout, Deadline::Header))
        } else {
            Some((st.last_io + self.limits.idle_timeout, Deadline::Idle))
        }
    }

    fn evict(&self) {
        let mut st = lock(&self.state);
        st.evicted = true;
        if let Some(w) = st.read_waker.take() {
            w.wake();
        }
    }

    /// A request was read and goes to the router.
    fn begin(self: &Arc<Self>) -> InFlight {
        let mut st = lock(&self.state);
        st.in_flight += 1;
        st.head_since = None;
        InFlight(Arc::clone(self))
    }
}

/// A request in progress; its end restarts the idle clock.
struct InFlight(Arc<Conn>);

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.in_flight = st.in_flight.saturating_sub(1);
        st.last_io = Instant::now();
        // A read that went pending during the request had no deadline: it
        // polls again to take the idle one.
        if st.in_flight == 0 {
            if let Some(w) = st.read_waker.take() {
                w.wake();
            }
        }
    }
}

/// The connection of a request (`ConnectInfo<HttpConn>` in its extensions).
#[derive(Clone)]
pub struct HttpConn(Arc<Conn>);

impl HttpConn {
    /// The connection's source address (IPv4-mapped IPv6 as IPv4).
    pub fn ip(&self) -> IpAddr {
        self.0.ip
    }
}

impl Connected<IncomingStream<'_, GuardedListener>> for HttpConn {
    fn connect_info(stream: IncomingStream<'_, GuardedListener>) -> HttpConn {
        HttpConn(Arc::clone(&stream.io().conn))
    }
}

/// A TCP listener that admits sockets within the budgets.
pub struct GuardedListener {
    listener: TcpListener,
    guard: Arc<Guard>,
}

impl GuardedListener {
    /// Guards `listener` with `limits`.
    pub fn new(listener: TcpListener, limits: HttpLimits) -> GuardedListener {
        let book = Book { per_addr: HashMap::new(), open: HashMap::new(), next_id: 0 };
        GuardedListener { listener, guard: Arc::new(Guard { limits, book: Mutex::new(book) }) }
    }
}

/// The answer a refused socket gets (if its buffer takes it) before it is
/// closed.
const REFUSED: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\n\
Content-Length: 20\r\n\r\ntoo many connections";

impl Listener for GuardedListener {
    type Io = GuardedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (GuardedIo, SocketAddr) {
        loop {
            let (stream, addr) = match self.listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    // Out of descriptors or memory: wait for some to come back
                    // instead of spinning (what axum's own listener does).
                    tracing::warn!(error = %e, "http: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let ip = match addr.ip() {
                IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
                v4 => v4,
            };
            match self.guard.admit(ip) {
                Ok(conn) => {
                    let _ = stream.set_nodelay(true);
                    return (GuardedIo::new(stream, conn, Arc::clone(&self.guard)), addr);
                }
                Err(why) => {
                    tracing::debug!(%addr, ?why, "http: connection refused");
                    // A fresh socket's send buffer is empty: this never blocks.
                    let _ = stream.try_write(REFUSED);
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.listener.local_addr()
    }
}

/// An admitted socket with its deadlines.
pub struct GuardedIo {
    stream: TcpStream,
    conn: Arc<Conn>,
    guard: Arc<Guard>,
    read_timer: Pin<Box<Sleep>>,
    write_timer: Pin<Box<Sleep>>,
    /// When the write that is waiting for the peer gives up.
    write_deadline: Option<Instant>,
}

impl GuardedIo {
    fn new(stream: TcpStream, conn: Arc<Conn>, guard: Arc<Guard>) -> GuardedIo {
        let now = Instant::now();
        GuardedIo {
            stream,
            conn,
            guard,
            read_timer: Box::pin(tokio::time::sleep_until(now)),
            write_timer: Box::pin(tokio::time::sleep_until(now)),
            write_deadline: None,
        }
    }

    /// Waits on `timer` for `deadline`: ready once it has passed.
    fn expired(timer: &mut Pin<Box<Sleep>>, deadline: Instant, cx: &mut Context<'_>) -> bool {
        if Instant::now() >= deadline {
            return true;
        }
        if timer.deadline() != deadline {
            timer.as_mut().reset(deadline);
        }
        timer.as_mut().poll(cx).is_ready()
    }

    /// The outcome of a write: progress restarts the idle clock; a write
    /// the peer does not take for the idle timeout fails.
    fn after_write<T>(&mut self, cx: &mut Context<'_>, r: Poll<io::Result<T>>) -> Poll<io::Result<T>> {
        match r {
            Poll::Ready(Ok(n)) => {
                self.write_deadline = None;
                lock(&self.conn.state).last_io = Instant::now();
                Poll::Ready(Ok(n))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => {
                let d = *self
                    .write_deadline
                    .get_or_insert_with(|| Instant::now() + self.conn.limits.idle_timeout);
                if GuardedIo::expired(&mut self.write_timer, d, cx) {
                    Poll::Ready(Err(Deadline::Write.error()))
                } else {
                    Poll::Pending
                }
            }
        }
    }
}

impl Drop for GuardedIo {
    fn drop(&mut self) {
        self.guard.release(&self.conn);
    }
}

impl AsyncRead for GuardedIo {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let deadline = {
            let mut st = lock(&this.conn.state);
            if st.evicted {
                // End of stream: hyper closes the connection.
                return Poll::Ready(Ok(()));
            }
            if !st.read_waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                st.read_waker = Some(cx.waker().clone());
            }
            this.conn.read_deadline(&st)
        };
        if let Some((d, which)) = deadline {
            if Instant::now() >= d {
                return Poll::Ready(Err(which.error()));
            }
        }
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                if buf.filled().len() > before {
                    let mut st = lock(&this.conn.state);
                    let now = Instant::now();
                    st.last_io = now;
                    if st.in_flight == 0 && st.head_since.is_none() {
                        st.head_since = Some(now);
                    }
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match deadline {
                Some((d, which)) if GuardedIo::expired(&mut this.read_timer, d, cx) => {
                    Poll::Ready(Err(which.error()))
                }
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for GuardedIo {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.stream).poll_write(cx, buf);
        this.after_write(cx, r)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.after_write(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let r = Pin::new(&mut this.stream).poll_flush(cx);
        this.after_write(cx, r)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// Middleware: marks the request in progress on its connection (its read
/// deadlines pause, the idle clock restarts when it is answered) and puts
/// the body deadline on its body.
pub async fn request(req: Request, next: Next) -> Response {
    let conn = req.extensions().get::<ConnectInfo<HttpConn>>().map(|c| Arc::clone(&(c.0).0));
    let Some(conn) = conn else {
        return next.run(req).await;
    };
    let in_flight = conn.begin();
    let req = if req.body().is_end_stream() {
        req
    } else {
        let deadline = Instant::now() + conn.limits.body_timeout;
        req.map(|body| with_deadline(body, deadline))
    };
    let response = next.run(req).await;
    drop(in_flight);
    response
}

/// `body`, failing with a timeout once `deadline` has passed before its end.
fn with_deadline(body: Body, deadline: Instant) -> Body {
    let stream = futures_util::stream::unfold(Some(body.into_data_stream()), move |s| async move {
        let mut s = s?;
        match tokio::time::timeout_at(deadline, s.next()).await {
            Ok(Some(Ok(bytes))) => Some((Ok(bytes), Some(s))),
            Ok(Some(Err(e))) => Some((Err(io::Error::other(e)), None)),
            Ok(None) => None,
            Err(_) => Some((
                Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "HTTP request body not received within the body deadline",
                )),
                None,
            )),
        }
    });
    Body::from_stream(stream)
}
