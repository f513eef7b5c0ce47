//! `claw-dealer`: runs card-game rooms over WebSocket, or a bots demo.
//!
//! ```text
//! claw-dealer --game texas-holdem --buy-in 500 --commission 1
//! claw-dealer --rooms rooms.toml
//! claw-dealer --game texas-holdem --bots 6 --hands 100
//! ```
//!
//! Output: a serving dealer writes its invite URLs on stdout, one per line,
//! and nothing else; the demo writes its summary on stdout. Everything else
//! (start-up facts, logs, errors) goes to stderr: `claw-dealer: …` lines
//! and tracing logs as text, or only JSON objects, one per line, with
//! `--log-format json`; the demo's progress line only on a terminal with
//! text logs.
//!
//! `--chips evm` and `--chips solana` need the cargo features `evm` /
//! `solana` (`--features chains`), `--solana-litesvm` the feature
//! `solana-litesvm`; a build without them says so in one line.

use claw_dealer_cli::defaults::{self, Ledger, Reach, WelcomeFlags, WelcomePlan};
use claw_dealer_cli::demo;
use claw_dealer_cli::features::Built;
use claw_dealer_cli::rooms_chips::ChipsTable;
#[cfg(feature = "solana-litesvm")]
use claw_dealer_cli::solana_demo::{self, DemoChain};

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use claw_chips::http::HttpConfigError;
use claw_chips::{AccountId, ChipProvider, EscrowChips, HttpChips, HttpChipsConfig, LocalChips};
#[cfg(feature = "evm")]
use claw_chips::{EvmChips, EvmChipsConfig};
#[cfg(feature = "solana")]
use claw_chips::{SolanaChips, SolanaChipsConfig};
use claw_cli_log::whole_number;
use claw_cli_log::{json_requested, LogFormat, Stderr};
use claw_dealer::chips::Grants;
use claw_dealer::config::{has_house, parse_duration, EntropyMode, RevealPolicy};
use claw_dealer::lock::DataDirLock;
use claw_dealer::tls::ServerTls;
use claw_dealer::{DealerNode, Limits, NodeConfig, RoomConfig, RoomsFile};
use claw_games::GameMeta;
use claw_protocol::{Chips, Identity, PlayerId};

/// How a points ledger (built-in or `--chips-url`) settles a hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SettleMode {
    /// Stakes move into an escrow account at hand start and the result is
    /// paid out of it at hand end: two ledger writes per hand.
    Hand,
    /// Every bet and payout is its own ledger write.
    Call,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ChipsKind {
    /// `http` when --chips-url is given, else the built-in points server
    /// (SQLite in the data directory).
    Auto,
    /// In memory; lost at exit (tests, quick demos).
    Local,
    /// An external points service (--chips-url, --chips-token).
    Http,
    /// The ChipVault contract on an EVM chain (--evm-rpc-url, --evm-chain-id,
    /// --evm-vault, --evm-key-file; docs/chips-evm.md). Needs a build with
    /// `--features chains` (or `evm`).
    Evm,
    /// An SPL Token mint on Solana, buy-ins approved by the players
    /// (--solana-rpc-url, --solana-mint, --solana-escrow, --solana-key-file,
    /// or --solana-litesvm for an in-process demo bank; docs/chips-solana.md).
    /// Needs a build with `--features chains` (or `solana`).
    Solana,
}

impl ChipsKind {
    fn name(self) -> &'static str {
        match self {
            ChipsKind::Auto => "auto",
            ChipsKind::Local => "local",
            ChipsKind::Http => "http",
            ChipsKind::Evm => "evm",
            ChipsKind::Solana => "solana",
        }
    }
}

/// No in-process Solana bank in a build without the feature `solana-litesvm`
/// (`--solana-litesvm` is refused before one would start).
#[cfg(not(feature = "solana-litesvm"))]
enum DemoChain {}

#[cfg(not(feature = "solana-litesvm"))]
impl DemoChain {
    fn tokens_of(&self, _: &Identity) -> u64 {
        match *self {}
    }
    fn escrow_tokens(&self) -> u64 {
        match *self {}
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum RevealArg {
    Full,
    Deferred,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DealArg {
    Dealer,
    Blind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum EntropyArg {
    Joint,
    Dealer,
}

fn dur(s: &str) -> Result<Duration, String> {
    parse_duration(s)
}

/// A provably fair card dealer: rooms over WebSocket, every card committed,
/// every hand auditable.
///
/// Operator commands on a running dealer (ban, freeze, abuse signals):
/// `claw-dealer admin --help`.
#[derive(Debug, Parser)]
#[command(name = "claw-dealer", version, about)]
struct Cli {
    /// Game of the single room (a registered game; `--help` lists them).
    #[arg(
        long,
        required_unless_present = "rooms",
        value_parser = clap::builder::PossibleValuesParser::new(claw_games::registry::names())
    )]
    game: Option<String>,
    /// Id of the single room (the invite URL path); default: the game name.
    #[arg(long)]
    room: Option<String>,
    /// Several rooms from a TOML file (`[[room]]` tables, see docs/dealer.md).
    #[arg(long, conflicts_with = "game")]
    rooms: Option<PathBuf>,
    /// Minimum chip balance to take a seat.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole_number)]
    buy_in: u64,
    /// Smallest bet (passed to games whose settings take it; players who
    /// cannot cover commission + min bet are kicked before a hand).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole_number)]
    min_bet: u64,
    /// Largest bet (passed to games whose settings take it).
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole_number)]
    max_bet: u64,
    /// Fixed fee per player per hand, paid to the dealer's account.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true, value_parser = whole_number)]
    commission: u64,
    /// Time to act before the game's auto action (e.g. 30s, 500ms).
    #[arg(long, value_parser = dur, default_value = "30s")]
    timeout: Duration,
    /// Seats per room (0 = the game's maximum).
    #[arg(long, default_value_t = 0)]
    max_players: u8,
    /// Players needed to start a hand (0 = the game's minimum).
    #[arg(long, default_value_t = 0)]
    min_players: u8,
    /// Pause between hands (default 10s; 0 with --bots).
    #[arg(long, value_parser = dur)]
    between_hands: Option<Duration>,
    /// Reveal policy (default: full; sam-gong: deferred).
    #[arg(long, value_enum)]
    reveal: Option<RevealArg>,
    /// With --reveal deferred: publish this long after the hand (else at room close).
    #[arg(long, value_parser = dur)]
    reveal_delay: Option<Duration>,
    /// Shuffle entropy: joint (dealer + player seeds) or dealer.
    #[arg(long, value_enum, default_value = "joint")]
    entropy: EntropyArg,
    /// Who sees the cards: dealer (it deals, commits and seals every card)
    /// or blind (a mental-poker deal: the players hold the deck's key and
    /// shuffle it, the dealer never sees a hidden card; texas-holdem and
    /// sam-gong; SPEC.md §9.7).
    #[arg(long, value_enum, default_value = "dealer")]
    deal: DealArg,
    /// Game settings as JSON, e.g. '{"small_blind":5,"big_blind":10}'.
    #[arg(long)]
    settings: Option<String>,
    /// WebSocket listen address (default 127.0.0.1:7777; a free port with --bots).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// Health and metrics listen address, or `off` (default 127.0.0.1:7778; off with --bots).
    #[arg(long)]
    http_listen: Option<String>,
    /// Host[:port] written in invite URLs (default: the listen address).
    #[arg(long, conflicts_with = "public_url")]
    public_host: Option<String>,
    /// URL in front of the rooms in invite URLs, for a dealer behind a TLS
    /// proxy (e.g. wss://cards.example.com/claw).
    #[arg(long, value_name = "URL")]
    public_url: Option<String>,
    /// Serve wss:// with this PEM certificate chain (leaf first); needs --tls-key.
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// Stderr lines: text, or json (every line one JSON object); RUST_LOG
    /// filters the tracing logs.
    #[arg(long, value_enum, default_value = "text")]
    log_format: LogFormat,
    /// Key file, transcripts, chip journals, points database. Default: a
    /// fresh directory under the system's temporary directory for each
    /// --bots demo (printed at its end); else $XDG_DATA_HOME/claw, or
    /// ~/.local/share/claw.
    #[arg(long = "data-dir", value_name = "DATA_DIR")]
    data_dir_flag: Option<PathBuf>,
    /// `--data-dir` or its default (set after parsing).
    #[arg(skip)]
    data_dir: PathBuf,
    /// Where chips live (default: the rooms file's `[chips] type`, else auto).
    #[arg(long = "chips", value_enum)]
    chips_flag: Option<ChipsKind>,
    /// `--chips`, else the rooms file's, else auto (set after parsing).
    #[arg(skip = ChipsKind::Auto)]
    chips: ChipsKind,
    /// URL of an external points service.
    #[arg(long, env = "CLAW_CHIPS_URL")]
    chips_url: Option<String>,
    /// Bearer token of the external points service.
    #[arg(long, env = "CLAW_CHIPS_TOKEN", hide_env_values = true)]
    chips_token: Option<String>,
    /// Permit a points service on a private network (10/8, 192.168/16,
    /// fc00::/7, …), still over TLS.
    #[arg(long, env = "CLAW_CHIPS_ALLOW_PRIVATE")]
    chips_allow_private: bool,
    /// How a points ledger settles: `hand` (escrow account
    /// `escrow:<dealer id>`, journal in DATA_DIR/escrow-journal) or `call`.
    /// Default: `hand` for the built-in points server, `call` for --chips-url.
    #[arg(long, value_enum, value_name = "MODE")]
    chips_settle: Option<SettleMode>,
    /// EVM: JSON-RPC URL of the node (https, or http to a loopback host).
    #[arg(long, env = "CLAW_EVM_RPC_URL", value_name = "URL")]
    evm_rpc_url: Option<String>,
    /// EVM: the chain id the node must serve (31337 for a local anvil).
    #[arg(long, env = "CLAW_EVM_CHAIN_ID")]
    evm_chain_id: Option<u64>,
    /// EVM: address of the ChipVault contract.
    #[arg(long, env = "CLAW_EVM_VAULT", value_name = "ADDRESS")]
    evm_vault: Option<String>,
    /// EVM: file with the operator's secp256k1 key in hex (mode 0600).
    #[arg(long, env = "CLAW_EVM_KEY_FILE", value_name = "FILE")]
    evm_key_file: Option<PathBuf>,
    /// EVM: blocks on top of the including block before a transaction counts (default 0).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    evm_confirmations: Option<u64>,
    /// EVM: how long a hand's stakes stay locked without a settlement
    /// (then players can withdraw them without the dealer).
    #[arg(long, value_parser = dur, default_value = "15m")]
    evm_lock: Duration,
    /// EVM: first block to search for player registrations (the vault's deployment; default 0).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    evm_from_block: Option<u64>,
    /// EVM: permit an RPC host on a private network (still over TLS).
    #[arg(long)]
    evm_allow_private: bool,
    /// Solana: JSON-RPC URL of the cluster (https, or http to a loopback host).
    #[arg(long, env = "CLAW_SOLANA_RPC_URL", value_name = "URL")]
    solana_rpc_url: Option<String>,
    /// Solana: the chip mint (an SPL Token mint, base58).
    #[arg(long, env = "CLAW_SOLANA_MINT", value_name = "ADDRESS")]
    solana_mint: Option<String>,
    /// Solana: the table's escrow, a token account of the mint owned by the operator key.
    #[arg(long, env = "CLAW_SOLANA_ESCROW", value_name = "ADDRESS")]
    solana_escrow: Option<String>,
    /// Solana: the operator's keypair file (Solana CLI JSON format, mode 0600).
    #[arg(long, env = "CLAW_SOLANA_KEY_FILE", value_name = "FILE")]
    solana_key_file: Option<PathBuf>,
    /// Solana: permit an RPC host on a private network (still over TLS).
    #[arg(long)]
    solana_allow_private: bool,
    /// Solana demo: run an in-process bank (litesvm, the real SPL programs)
    /// behind a JSON-RPC responder on 127.0.0.1, with a fresh mint, escrow
    /// and operator key; the --bots get 1000 chips each and approve the dealer.
    /// Needs a build with `--features solana-litesvm` (dev/demo only).
    #[arg(long, requires = "bots_flag")]
    solana_litesvm: bool,
    /// Welcome chips granted once to every new identity (0: none). Default,
    /// with local or built-in chips: 10000 play-money chips in the --bots
    /// demo and on a dealer only this machine reaches (listening on
    /// loopback, no --public-host/--public-url/--tls-cert); none on a dealer
    /// reachable from the network.
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    welcome: Option<u64>,
    /// The most welcome chips the node grants in total (default 100 ×
    /// --welcome when given; no total cap in the demo or for the local
    /// play-money default).
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    welcome_total: Option<u64>,
    /// The most welcome chips the node grants per day (a 24 h window from
    /// the first grant in it); default: 100 × the welcome chips for the
    /// local play-money default, else no daily cap.
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    welcome_per_day: Option<u64>,
    /// Daily chips: granted at a join, once per identity and UTC+8 day,
    /// paid from the operator account (--grants-from); 0 (the default): none.
    #[arg(long, default_value_t = 0, value_parser = whole_number)]
    daily_chips: u64,
    /// Rescue chips: granted at a join to an identity whose balance is below
    /// --rescue-below, once per identity and UTC+8 day, paid from the
    /// operator account; 0 (the default): none.
    #[arg(long, default_value_t = 0, value_parser = whole_number)]
    rescue_chips: u64,
    /// The balance under which a join is rescued.
    #[arg(long, default_value_t = 500, value_parser = whole_number)]
    rescue_below: u64,
    /// The most daily chips, and apart the most rescue chips, the node
    /// grants per UTC+8 day, all identities together (default: 100 × the
    /// grant).
    #[arg(long, value_parser = whole_number)]
    grants_per_day: Option<u64>,
    /// The account the daily and rescue chips are paid from (default: the
    /// dealer's own account, where commission and rake are paid). A grant
    /// it cannot cover is refused: these grants never create chips.
    #[arg(long)]
    grants_from: Option<String>,
    /// Chips granted once to the house of a game with a house (blackjack),
    /// at room start. Required for such a game on a dealer reachable from
    /// the network; default 1000000 play-money chips in the demo and on a
    /// dealer only this machine reaches, with local or built-in chips.
    #[arg(long, allow_negative_numbers = true, value_parser = whole_number)]
    house_bankroll: Option<u64>,
    /// House-AI seats: while a person is seated, empty seats are filled
    /// with the dealer's own bots this long after one could be (e.g. 5s);
    /// rooms file: `ai_seats = { after = "5s" }`.
    #[arg(long, value_parser = dur, value_name = "WAIT")]
    ai_seats: Option<Duration>,
    /// House-AI strength, Guandan only: 1, 2 or 3 (default: its L2).
    #[arg(long, requires = "ai_seats", value_parser = clap::value_parser!(u8).range(1..=3))]
    ai_level: Option<u8>,
    /// Chips each house AI sits down with (default: ten times what the
    /// room needs to seat a player, at least 10000), transferred from the
    /// house-AI account.
    #[arg(long, requires = "ai_seats", value_parser = whole_number)]
    ai_chips: Option<u64>,
    /// A disconnected person's seat goes to a house AI after this grace
    /// while another person plays on (default: never; the reconnect window
    /// holds the seat).
    #[arg(long, requires = "ai_seats", value_parser = dur)]
    ai_takeover: Option<Duration>,
    /// Chips granted once to the house-AI account (`house-ai`) that pays
    /// every house AI's chips; an AI its balance cannot cover is not
    /// seated. Default 1000000 play-money chips in the demo and on a
    /// dealer only this machine reaches with local or built-in chips, else 0.
    #[arg(long, value_parser = whole_number)]
    ai_budget: Option<u64>,
    /// Demo: fill the room with N bots (SDK clients over WebSocket), play
    /// --hands, audit every hand, exit. `--bots` alone seats the game's
    /// usual table: its maximum, at most 6.
    #[arg(long = "bots", value_name = "N")]
    bots_flag: Option<Option<u8>>,
    /// The demo's bots (set after parsing; 0: no demo).
    #[arg(skip)]
    bots: u8,
    /// Demo: after the hands keep the dealer and its web app up (HTTP port
    /// default 127.0.0.1:7778) until Ctrl-C, to watch and check the hands
    /// in the browser.
    #[arg(long, requires = "bots_flag")]
    serve: bool,
    /// Demo: hands to play, then exit (with --serve: keep serving).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true, value_parser = whole_number)]
    hands: u64,
    /// Demo: bot i plays with the key file DIR/bot-<i>.key (created if
    /// missing), e.g. ids registered in an EVM vault; default: fresh keys.
    #[arg(long, value_name = "DIR")]
    bot_keys: Option<PathBuf>,
    /// Demo: bot strategy (simple or random).
    #[arg(long, default_value = "simple")]
    bot_strategy: String,
    /// Open connections at most (limit `max_connections`).
    #[arg(long, default_value_t = Limits::default().max_connections)]
    max_connections: usize,
    /// Messages per second per player, queries and unsolicited messages (limit `rate_per_sec`).
    #[arg(long, default_value_t = Limits::default().rate_per_sec)]
    rate_limit: u32,
    /// Open connections per source address, checked before --max-connections (limit `max_conns_per_addr`).
    #[arg(long, default_value_t = Limits::default().max_conns_per_addr)]
    max_conns_per_addr: usize,
    /// Kick a connection that is not seated and sent no join request or query for this long (limit `idle_timeout`).
    #[arg(long, value_parser = dur, default_value = "30s")]
    idle_timeout: Duration,
    /// Sets any node limit, e.g. `--limit send_grace=10s --limit max_watchers=128`;
    /// every limit and its default is listed at the end of `--help`. Applied after
    /// the flags above.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    limits: Vec<String>,
    /// How long after a hand the web app shows it to spectators (default 30s).
    #[arg(long, value_parser = dur)]
    spectator_delay: Option<Duration>,
    /// Serve the admin API on the HTTP listener (`/admin/rooms`: open and
    /// close rooms at run time, private rooms); its bearer token is in
    /// DATA_DIR/admin.token (created 0600).
    #[arg(long)]
    admin_api: bool,
    /// A room opened through the admin API with nobody seated this long is closed.
    #[arg(long, value_parser = dur, default_value = "10m")]
    room_expiry: Duration,
    /// On Ctrl-C or SIGTERM: time given to running hands before they are voided and refunded.
    #[arg(long, value_parser = dur, default_value = "10s")]
    shutdown_grace: Duration,
}

/// The room of `--game` and the room flags; `bankroll` is the house
/// bankroll a house game gets when `--house-bankroll` is not given.
fn room_from_flags(cli: &Cli, game: &str, bankroll: Option<Chips>) -> anyhow::Result<RoomConfig> {
    let mut r = RoomConfig::new(cli.room.clone().unwrap_or_else(|| game.to_owned()), game);
    r.buy_in = Chips(cli.buy_in);
    r.min_bet = Chips(cli.min_bet);
    r.max_bet = Chips(cli.max_bet);
    r.commission = Chips(cli.commission);
    r.action_timeout = cli.timeout;
    r.max_players = cli.max_players;
    r.min_players = cli.min_players;
    r.between_hands =
        cli.between_hands.unwrap_or(if cli.bots > 0 { Duration::ZERO } else { Duration::from_secs(10) });
    // None: RoomConfig::new's default for the game, as in the rooms file.
    match cli.reveal {
        Some(RevealArg::Full) => r.reveal = RevealPolicy::Full,
        Some(RevealArg::Deferred) => r.reveal = RevealPolicy::Deferred,
        None => {}
    }
    r.reveal_delay = cli.reveal_delay;
    r.entropy = match cli.entropy {
        EntropyArg::Joint => EntropyMode::Joint,
        EntropyArg::Dealer => EntropyMode::Dealer,
    };
    if cli.deal == DealArg::Blind {
        // The games offered are `RoomConfig::validate`'s to say. The
        // players' shuffles order a blind deck: no seed round.
        r.deal = claw_protocol::messages::DealMode::Blind;
        r.entropy = EntropyMode::Dealer;
    }
    if let Some(s) = &cli.settings {
        r.settings = serde_json::from_str(s).context("--settings is not JSON")?;
    }
    // Refused, if it does not fit the game, by the rooms' one validation
    // (`RoomConfig::validate`), with the rooms file's and the admin API's reason.
    r.house_bankroll = match (cli.house_bankroll, has_house(game)) {
        (Some(n), _) => Chips(n),
        (None, true) => bankroll.unwrap_or(Chips::ZERO),
        (None, false) => Chips::ZERO,
    };
    if let Some(after) = cli.ai_seats {
        let mut ai = claw_dealer::ai::AiSeats::after(after);
        ai.level =
            cli.ai_level.map(claw_dealer::ai::AiLevel::try_from).transpose().map_err(anyhow::Error::msg)?;
        ai.chips = Chips(cli.ai_chips.unwrap_or(0));
        ai.takeover = cli.ai_takeover;
        r.ai_seats = Some(ai);
    }
    if cli.bots > 0 {
        r.max_hands = Some(cli.hands);
    }
    Ok(r)
}

struct ChipsSetup {
    provider: Arc<dyn ChipProvider>,
    grants: Option<Arc<dyn Grants>>,
    points: Option<claw_points::RunningServer>,
    label: String,
}

/// `inner` as `--chips-settle` asks (`default` when the flag is absent):
/// per call as it is, or per hand through the dealer's escrow account.
fn settle_mode(
    cli: &Cli,
    inner: Arc<dyn ChipProvider>,
    default: SettleMode,
    dealer: Option<PlayerId>,
) -> anyhow::Result<Arc<dyn ChipProvider>> {
    let dir = cli.data_dir.join("escrow-journal");
    match cli.chips_settle.unwrap_or(default) {
        SettleMode::Call => {
            let unfinished = std::fs::read_dir(dir.join("open")).map(|d| d.count()).unwrap_or(0);
            if unfinished > 0 {
                bail!(
                    "{} holds {unfinished} unfinished escrowed hand(s): start once with --chips-settle hand \
                     so that they are settled or refunded",
                    dir.display()
                );
            }
            Ok(inner)
        }
        SettleMode::Hand => {
            let dealer = dealer.context("the dealer identity")?;
            let escrow = AccountId::new(format!("escrow:{dealer}")).context("escrow account")?;
            let house = AccountId::new(format!("dealer:{dealer}")).context("dealer account")?;
            let c = EscrowChips::new(inner, escrow, house, &dir)
                .with_context(|| format!("escrow journal {}", dir.display()))?;
            Ok(Arc::new(c))
        }
    }
}

/// Whose ledger `--chips` (after the rooms file) is, for the defaults.
fn ledger_of(cli: &Cli) -> Ledger {
    match (cli.chips, &cli.chips_url) {
        (ChipsKind::Local, _) | (ChipsKind::Auto, None) => Ledger::Own,
        (ChipsKind::Auto | ChipsKind::Http, _) => Ledger::External,
        (ChipsKind::Evm | ChipsKind::Solana, _) => Ledger::NoGrants,
    }
}

/// The registered game `name`'s facts.
fn game_meta(name: &str) -> anyhow::Result<GameMeta> {
    Ok(claw_games::registry::get(name).map_err(|e| anyhow::anyhow!("{e}"))?.meta())
}

/// The EVM provider's settings from the `--evm-*` flags; its journal lives
/// in the data directory.
#[cfg(feature = "evm")]
fn evm_config(cli: &Cli) -> anyhow::Result<EvmChipsConfig> {
    let url = cli.evm_rpc_url.clone().context("--chips evm needs --evm-rpc-url")?;
    let chain_id = cli.evm_chain_id.context("--chips evm needs --evm-chain-id")?;
    let vault = cli.evm_vault.as_deref().context("--chips evm needs --evm-vault")?;
    let vault: alloy::primitives::Address =
        vault.parse().with_context(|| format!("--evm-vault {vault:?} is not an address"))?;
    let key = cli.evm_key_file.clone().context("--chips evm needs --evm-key-file")?;
    let mut cfg = EvmChipsConfig::new(url, chain_id, vault, key, cli.data_dir.join("evm-journal"));
    cfg.confirmations = cli.evm_confirmations.unwrap_or(0);
    cfg.allow_private = cli.evm_allow_private;
    cfg.lock_seconds = u32::try_from(cli.evm_lock.as_secs()).context("--evm-lock is too long")?;
    cfg.from_block = cli.evm_from_block.unwrap_or(0);
    Ok(cfg)
}

/// Fills what the flags left unset from the rooms file's `[chips]` table
/// (flags win; `allow_private` is on when either says so).
fn apply_file_chips(cli: &mut Cli, file: Option<ChipsTable>) -> anyhow::Result<()> {
    let f = file.unwrap_or_default();
    let from_file = match f.kind.as_deref() {
        Some(k) => Some(ChipsKind::from_str(k, true).map_err(|_| {
            anyhow::anyhow!("rooms file [chips] type = {k:?}: expected auto, local, http, evm or solana")
        })?),
        None => None,
    };
    cli.chips = cli.chips_flag.or(from_file).unwrap_or(ChipsKind::Auto);
    fill(&mut cli.chips_url, f.url);
    fill(&mut cli.chips_token, f.token);
    cli.chips_allow_private |= f.allow_private;
    if let Some(e) = f.evm {
        fill(&mut cli.evm_rpc_url, e.rpc_url);
        fill(&mut cli.evm_chain_id, e.chain_id);
        fill(&mut cli.evm_vault, e.contract);
        fill(&mut cli.evm_key_file, e.key_file);
        fill(&mut cli.evm_confirmations, e.confirmations);
        fill(&mut cli.evm_from_block, e.from_block);
        cli.evm_allow_private |= e.allow_private;
    }
    if let Some(s) = f.solana {
        fill(&mut cli.solana_rpc_url, s.rpc_url);
        fill(&mut cli.solana_mint, s.mint);
        fill(&mut cli.solana_escrow, s.escrow);
        fill(&mut cli.solana_key_file, s.key_file);
        cli.solana_allow_private |= s.allow_private;
    }
    Ok(())
}

/// `slot` keeps its flag value; unset, it takes the file's.
fn fill<T>(slot: &mut Option<T>, file: Option<T>) {
    if slot.is_none() {
        *slot = file;
    }
}

/// The Solana provider's settings from the `--solana-*` flags (or the demo
/// bank); its journal lives in the data directory.
#[cfg(feature = "solana")]
fn solana_config(cli: &Cli, demo: Option<&DemoChain>) -> anyhow::Result<SolanaChipsConfig> {
    let journal = cli.data_dir.join("solana-journal");
    if let Some(d) = demo {
        #[cfg(feature = "solana-litesvm")]
        return Ok(SolanaChipsConfig::new(d.rpc_url.clone(), d.mint, d.escrow, d.key_file.clone(), journal));
        #[cfg(not(feature = "solana-litesvm"))]
        match *d {}
    }
    let url =
        cli.solana_rpc_url.clone().context("--chips solana needs --solana-rpc-url (or --solana-litesvm)")?;
    let address = |flag: &str, v: &Option<String>| -> anyhow::Result<claw_chips::solana::Address> {
        let v = v.as_deref().with_context(|| format!("--chips solana needs --{flag}"))?;
        v.parse().map_err(|_| anyhow::anyhow!("--{flag} {v:?} is not a base58 Solana address"))
    };
    let mint = address("solana-mint", &cli.solana_mint)?;
    let escrow = address("solana-escrow", &cli.solana_escrow)?;
    let key = cli.solana_key_file.clone().context("--chips solana needs --solana-key-file")?;
    let mut cfg = SolanaChipsConfig::new(url, mint, escrow, key, journal);
    cfg.allow_private = cli.solana_allow_private;
    Ok(cfg)
}

/// The chip provider of `--chips`; `dealer` (the dealer's id) names the
/// account commission goes to where the provider needs it up front.
#[cfg_attr(not(feature = "solana"), allow(unused_variables))]
async fn chips_setup(
    cli: &Cli,
    dealer: Option<PlayerId>,
    solana_bank: Option<&DemoChain>,
) -> anyhow::Result<ChipsSetup> {
    let kind = match (cli.chips, &cli.chips_url) {
        (ChipsKind::Auto, Some(_)) => ChipsKind::Http,
        (k, _) => k,
    };
    match kind {
        ChipsKind::Local => {
            let c = Arc::new(LocalChips::new());
            Ok(ChipsSetup {
                provider: c.clone(),
                grants: Some(c),
                points: None,
                label: "local (in memory)".into(),
            })
        }
        ChipsKind::Http => {
            let url = cli.chips_url.clone().context("--chips http needs --chips-url")?;
            let token =
                cli.chips_token.clone().context("--chips http needs --chips-token (or CLAW_CHIPS_TOKEN)")?;
            let mut cfg = HttpChipsConfig::new(url.clone(), token);
            cfg.allow_private = cli.chips_allow_private;
            let c = Arc::new(HttpChips::new(cfg).map_err(|e| match e {
                HttpConfigError::PrivateAddress(host) => anyhow::anyhow!(
                    "--chips-url {url}: {host} is a private or reserved address; \
                     pass --chips-allow-private to use it (still over TLS)"
                ),
                e => anyhow::Error::new(e).context(format!("--chips-url {url}")),
            })?);
            if let Err(e) = c.health().await {
                let why = claw_dealer_cli::points_url::explain(&url, cli.chips_allow_private, &e).await;
                bail!("points service at {url}: {why}");
            }
            Ok(ChipsSetup {
                provider: settle_mode(cli, c.clone(), SettleMode::Call, dealer)?,
                grants: Some(c),
                points: None,
                label: format!("http {url}"),
            })
        }
        #[cfg(feature = "evm")]
        ChipsKind::Evm => {
            let cfg = evm_config(cli)?;
            let dealer = dealer.context("the dealer identity")?;
            let house = AccountId::new(format!("dealer:{dealer}")).context("dealer account")?;
            let c = EvmChips::connect(&cfg, house).await.with_context(|| {
                format!("EVM chips: node {} (chain {}), vault {}", cfg.rpc_url, cfg.chain_id, cfg.contract)
            })?;
            let label = format!(
                "evm chain {} vault {} operator {} ({})",
                cfg.chain_id,
                cfg.contract,
                c.chain().address(),
                cfg.rpc_url
            );
            Ok(ChipsSetup { provider: Arc::new(c), grants: None, points: None, label })
        }
        #[cfg(feature = "solana")]
        ChipsKind::Solana => {
            let cfg = solana_config(cli, solana_bank)?;
            let dealer = dealer.context("the dealer identity")?;
            let house = AccountId::new(format!("dealer:{dealer}")).context("dealer account")?;
            let c = SolanaChips::connect(&cfg, house).await.with_context(|| {
                format!("Solana chips: cluster {}, mint {}, escrow {}", cfg.rpc_url, cfg.mint, cfg.escrow)
            })?;
            let demo = if solana_bank.is_some() { ", in-process litesvm bank" } else { "" };
            let label = format!(
                "solana mint {} escrow {} operator {} ({}{demo})",
                cfg.mint,
                cfg.escrow,
                c.operator(),
                cfg.rpc_url
            );
            Ok(ChipsSetup { provider: Arc::new(c), grants: None, points: None, label })
        }
        // Refused in main before anything starts (`check_build`); the same
        // error should a path reach here.
        #[cfg(not(feature = "evm"))]
        ChipsKind::Evm => Err(anyhow::anyhow!(check_build(cli).unwrap_or_default())),
        #[cfg(not(feature = "solana"))]
        ChipsKind::Solana => Err(anyhow::anyhow!(check_build(cli).unwrap_or_default())),
        ChipsKind::Auto => {
            std::fs::create_dir_all(&cli.data_dir)?;
            let db = claw_points::sqlite_url(&cli.data_dir.join("points.db"));
            let token = claw_points::generate_token();
            let cfg =
                claw_points::ServerConfig::new(db, SocketAddr::from(([127, 0, 0, 1], 0)), token.clone());
            let server = claw_points::serve(cfg).await.context("built-in points server")?;
            let url = server.url();
            let c = Arc::new(
                HttpChips::new(HttpChipsConfig::new(url.clone(), token)).context("built-in points URL")?,
            );
            Ok(ChipsSetup {
                provider: settle_mode(cli, c.clone(), SettleMode::Hand, dealer)?,
                grants: Some(c),
                points: Some(server),
                label: format!("built-in points server {url} (SQLite in {})", cli.data_dir.display()),
            })
        }
    }
}

/// `--chips evm|solana` (or the rooms file's type) and `--solana-litesvm`
/// against what this build carries: the one error line saying how to build
/// it, or `None`.
fn check_build(cli: &Cli) -> Option<String> {
    let kind = cli.chips.name();
    let source = match cli.chips_flag {
        Some(_) => format!("--chips {kind}"),
        None => format!("rooms file [chips] type = {kind:?}"),
    };
    Built::THIS.missing(kind, &source, cli.solana_litesvm)
}

/// Starts the in-process Solana demo bank for `--solana-litesvm` (the bots'
/// keys must exist to fund them and approve), with the bots' identities.
#[cfg(feature = "solana-litesvm")]
async fn solana_demo_bank(
    cli: &Cli,
    bot_keys: Option<&std::path::Path>,
    say: Stderr,
) -> anyhow::Result<(Option<DemoChain>, Vec<Identity>)> {
    if !cli.solana_litesvm {
        return Ok((None, Vec::new()));
    }
    let dir = bot_keys.context("bot keys directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("bot keys {}", dir.display()))?;
    let mut ids = Vec::new();
    for i in 0..cli.bots {
        let path = dir.join(format!("bot-{i}.key"));
        ids.push(
            Identity::load_or_create(&path, &mut rand::rngs::OsRng)
                .with_context(|| format!("bot key {}", path.display()))?,
        );
    }
    let bank = solana_demo::start(&cli.data_dir, &ids, 1000).await.context("Solana demo bank")?;
    say.info(format_args!("solana demo bank (litesvm) JSON-RPC {}, mint {}", bank.rpc_url, bank.mint));
    Ok((Some(bank), ids))
}

/// Without the feature there is no bank (`--solana-litesvm` was refused).
#[cfg(not(feature = "solana-litesvm"))]
async fn solana_demo_bank(
    _: &Cli,
    _: Option<&std::path::Path>,
    _: Stderr,
) -> anyhow::Result<(Option<DemoChain>, Vec<Identity>)> {
    Ok((None, Vec::new()))
}

/// The demo's exit code: 0 every hand played and audited, 1 an audit
/// failed or hands are missing, 3 the table broke up first (too few bots
/// with chips left; audits fine), so that a script tells them apart.
fn demo_exit_code(outcome: &demo::DemoOutcome, hands: u64, say: Stderr) -> i32 {
    match &outcome.broke_up {
        _ if outcome.audit_failures > 0 => 1,
        Some(why) => {
            say.warn(why);
            3
        }
        None => i32::from(!(outcome.all_audited && outcome.hands == hands)),
    }
}

/// The signals that stop the node gracefully: Ctrl-C (SIGINT) and SIGTERM
/// (`docker stop`, systemd), handled the same way.
struct StopSignals {
    #[cfg(unix)]
    term: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn install() -> anyhow::Result<StopSignals> {
        Ok(StopSignals {
            #[cfg(unix)]
            term: tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                .context("installing the SIGTERM handler")?,
        })
    }

    /// Waits for the next stop signal; returns its name.
    async fn wait(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => "Ctrl-C",
                _ = self.term.recv() => "SIGTERM",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}

/// The end of `--help`: every node limit with its default (`--limit NAME=VALUE`).
fn limits_help() -> String {
    let d = Limits::default();
    let mut out = String::from(
        "Node limits (`--limit NAME=VALUE`; durations as 30s, 500ms, 2m), with their defaults:\n",
    );
    for name in Limits::NAMES {
        out.push_str(&format!("  {name:<24} {}\n", d.get(name).unwrap_or_default()));
    }
    out
}

/// The binary's own stderr lines (`claw-dealer: …`, errors and warnings
/// labelled as such) in `format`: start-up facts and errors, always said,
/// whatever `RUST_LOG` filters.
fn notices(format: LogFormat) -> Stderr {
    Stderr::new(format, "claw-dealer").labelled()
}

#[tokio::main]
async fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "admin") {
        use claw_dealer_cli::admin_cli::{run, AdminCli};
        let cli = AdminCli::try_parse_from(&args[1..]).unwrap_or_else(|e| e.exit());
        let code = run(cli).await.unwrap_or_else(|e| {
            notices(LogFormat::Text).error(format_args!("{e:#}"));
            1
        });
        std::process::exit(code);
    }
    let asked = notices(if json_requested(&args) { LogFormat::Json } else { LogFormat::Text });
    let matches = match Cli::command().after_long_help(limits_help()).try_get_matches_from(&args) {
        Ok(m) => m,
        Err(e) => usage_error(e, asked),
    };
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| usage_error(e, asked));
    let say = notices(cli.log_format);
    let code = match run(cli, say).await {
        Ok(code) => code,
        Err(e) => {
            say.error(format_args!("{e:#}"));
            1
        }
    };
    std::process::exit(code);
}

/// Exits on a usage error (status 2) as clap words it, as one JSON line
/// when JSON logs were asked for; `--help` and `--version` as usual.
fn usage_error(e: clap::Error, say: Stderr) -> ! {
    use clap::error::ErrorKind;
    let info = matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    );
    if info || say.format() == LogFormat::Text {
        e.exit()
    }
    let text = e.render().to_string();
    say.error(text.trim_end().trim_start_matches("error: "));
    std::process::exit(e.exit_code())
}

async fn run(mut cli: Cli, say: Stderr) -> anyhow::Result<i32> {
    let demo_asked = cli.bots_flag.is_some_and(|b| b != Some(0));
    claw_cli_log::init(cli.log_format, "RUST_LOG", if demo_asked { "warn" } else { "info" });
    let mut signals = StopSignals::install()?;
    let (file_rooms, file_chips, templates) = match &cli.rooms {
        Some(path) => {
            let f = RoomsFile::load(path)?;
            let chips =
                f.chips.map(|t| ChipsTable::parse(t, path)).transpose().map_err(anyhow::Error::msg)?;
            (Some(f.room), chips, f.template)
        }
        None => (None, None, Vec::new()),
    };
    apply_file_chips(&mut cli, file_chips)?;
    if cli.rooms.is_some() && cli.ai_seats.is_some() {
        bail!("--ai-seats sets up the --game room; in a rooms file write ai_seats = {{ after = \"5s\" }} in the room");
    }
    if let Some(e) = check_build(&cli) {
        // A usage error, as clap's (exit 2): one line.
        say.error(e);
        return Ok(2);
    }
    let game = cli.game.clone().or_else(|| file_rooms.iter().flatten().next().map(|r| r.game.clone()));
    cli.bots = match cli.bots_flag {
        None => 0,
        Some(Some(n)) => n,
        Some(None) => defaults::demo_seats(&game_meta(game.as_deref().context("--bots needs a room")?)?),
    };
    let demo = cli.bots > 0;
    if cli.serve && !demo {
        bail!("--serve keeps the --bots demo's dealer up after its hands; --bots 0 is no demo");
    }
    let listen =
        cli.listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], if demo { 0 } else { 7777 })));
    let reach =
        Reach::of(listen, cli.public_host.as_deref(), cli.public_url.as_deref(), cli.tls_cert.is_some());
    let ledger = ledger_of(&cli);
    let play_money_bankroll = defaults::default_bankroll(demo, ledger, reach);
    // Rooms whose house bankroll is the play-money default (said at start).
    let mut defaulted_bankroll = Vec::new();
    let mut rooms = match (file_rooms, &cli.game) {
        (Some(mut rooms), _) => {
            for r in rooms.iter_mut().filter(|r| has_house(&r.game) && r.house_bankroll.0 == 0) {
                if let Some(b) = play_money_bankroll {
                    r.house_bankroll = b;
                    defaulted_bankroll.push(r.id.clone());
                }
            }
            rooms
        }
        (None, Some(game)) => {
            let r = room_from_flags(&cli, game, play_money_bankroll)?;
            if has_house(game) && cli.house_bankroll.is_none() {
                defaulted_bankroll.push(r.id.clone());
            }
            vec![r]
        }
        (None, None) => bail!("give --game or --rooms"),
    };
    if demo {
        // The demo ends after --hands, in a rooms-file room too.
        rooms.iter_mut().for_each(|r| r.max_hands = r.max_hands.or(Some(cli.hands)));
        if rooms.len() != 1 {
            bail!("--bots needs a single room (--game)");
        }
        if let Some(game) = &game {
            let meta = game_meta(game)?;
            if cli.bots < meta.min_players || cli.bots > meta.max_players {
                bail!(
                    "{game} seats {}–{} players; --bots {} does not fit (--bots alone seats {})",
                    meta.min_players,
                    meta.max_players,
                    cli.bots,
                    defaults::demo_seats(&meta)
                );
            }
        }
    }
    let http_listen = match cli.http_listen.as_deref() {
        Some("off") if cli.serve => {
            bail!("--serve keeps the web app up on the HTTP port: drop --http-listen off")
        }
        Some("off") => None,
        Some(a) => Some(a.parse::<SocketAddr>().context("--http-listen")?),
        None if demo && !cli.serve => None,
        None => Some(SocketAddr::from(([127, 0, 0, 1], 7778))),
    };
    let mut limits = Limits {
        max_connections: cli.max_connections,
        rate_per_sec: cli.rate_limit,
        max_conns_per_addr: cli.max_conns_per_addr,
        idle_timeout: cli.idle_timeout,
        ..Limits::default()
    };
    for l in &cli.limits {
        let (name, value) =
            l.split_once('=').with_context(|| format!("--limit {l:?}: expected NAME=VALUE"))?;
        limits.set(name.trim(), value).map_err(|e| anyhow::anyhow!("--limit {l:?}: {e}"))?;
    }
    if matches!(cli.chips, ChipsKind::Evm | ChipsKind::Solana) {
        if let Some(r) = rooms.iter().find(|r| has_house(&r.game)) {
            bail!(
                "room {}: {} has a house, and {} chips have no house account; use another --chips",
                r.id,
                r.game,
                cli.chips.name()
            );
        }
    }
    if cli.solana_litesvm && cli.chips != ChipsKind::Solana {
        bail!("--solana-litesvm goes with --chips solana");
    }
    if cli.chips_settle.is_some() && !matches!(cli.chips, ChipsKind::Auto | ChipsKind::Http) {
        bail!(
            "--chips-settle applies to a points ledger (the built-in one or --chips-url), not --chips {}",
            cli.chips.name()
        );
    }
    // The data directory, once nothing else can refuse the command line.
    let fresh_dir = cli.data_dir_flag.is_none() && demo;
    cli.data_dir = match &cli.data_dir_flag {
        Some(d) => d.clone(),
        None if demo => defaults::fresh_demo_dir().context("creating a fresh data directory for the demo")?,
        None => defaults::user_data_dir_from_env().context(
            "no per-user data directory ($XDG_DATA_HOME, $HOME and %LOCALAPPDATA% are unset): give --data-dir DIR",
        )?,
    };
    let config_rooms = rooms.clone();
    let config = NodeConfig {
        listen,
        http_listen,
        public_host: cli.public_host.clone(),
        data_dir: cli.data_dir.clone(),
        rooms,
        limits,
        spectator_delay: cli.spectator_delay,
    };
    // Locked before the built-in points server opens its database there.
    std::fs::create_dir_all(&cli.data_dir)
        .with_context(|| format!("data directory {}", cli.data_dir.display()))?;
    let lock = DataDirLock::acquire(&cli.data_dir)?;
    if !demo {
        say.info(format_args!("data directory {}", cli.data_dir.display()));
    }
    let tls = match (&cli.tls_cert, &cli.tls_key) {
        (Some(cert), Some(key)) => Some(ServerTls::from_pem_files(cert, key)?),
        _ => None,
    };
    // Chain providers and per-hand escrow credit commission to the
    // dealer's account: they need the dealer's id before the node starts.
    let identity = match cli.chips {
        ChipsKind::Local => None,
        _ => Some(
            Identity::load_or_create(cli.data_dir.join("dealer.key"), &mut rand::rngs::OsRng)
                .context("dealer key")?,
        ),
    };
    // The Solana demo bank: the bots' keys must exist to fund and approve.
    let bot_keys = match (&cli.bot_keys, cli.solana_litesvm) {
        (None, true) => Some(cli.data_dir.join("bots")),
        (k, _) => k.clone(),
    };
    let (solana_bank, bot_ids) = solana_demo_bank(&cli, bot_keys.as_deref(), say).await?;
    let chips = chips_setup(&cli, identity.as_ref().map(Identity::id), solana_bank.as_ref()).await?;
    let mut builder =
        DealerNode::builder(config).chips(chips.provider.clone()).data_dir_lock(lock).templates(templates);
    if let Some(id) = identity {
        builder = builder.identity(id);
    }
    if let Some(t) = tls {
        builder = builder.tls(t);
    }
    if let Some(u) = &cli.public_url {
        builder = builder.public_url(u.clone());
    }
    let admin_token = cli.data_dir.join(claw_dealer::admin::TOKEN_FILE);
    if cli.admin_api {
        let token = claw_dealer::admin::load_or_create_token(&admin_token)
            .with_context(|| format!("admin token file {}", admin_token.display()))?;
        builder = builder.admin(claw_dealer::admin::AdminConfig {
            token,
            room_expiry: cli.room_expiry,
            close_grace: cli.shutdown_grace,
        });
    }
    if let Some(g) = chips.grants.clone() {
        let flags =
            WelcomeFlags { amount: cli.welcome, total: cli.welcome_total, per_day: cli.welcome_per_day };
        let welcome = WelcomePlan::resolve(flags, demo, ledger, reach);
        let per_day = welcome.per_day.map(|d| (d, Duration::from_secs(86_400)));
        builder = builder.grants(g, welcome.amount).welcome_total(welcome.total).welcome_per_period(per_day);
        let day = |amount: u64, below: Option<u64>| claw_chips::ledger::welcome::DayCaps {
            amount: Chips(amount),
            below: below.map(Chips),
            per_account: 1,
            budget_per_day: Some(cli.grants_per_day.unwrap_or(amount.saturating_mul(100))),
        };
        let days = vec![
            (claw_chips::ledger::welcome::GrantKind::Daily, day(cli.daily_chips, None)),
            (claw_chips::ledger::welcome::GrantKind::Rescue, day(cli.rescue_chips, Some(cli.rescue_below))),
        ];
        let from = match &cli.grants_from {
            Some(a) => Some(AccountId::new(a.clone()).context("--grants-from")?),
            None => None,
        };
        builder = builder.day_grants(days, from);
        if cli.daily_chips > 0 || cli.rescue_chips > 0 {
            say.info(format!(
                "daily chips: {} once per identity and UTC+8 day; rescue chips: {} below a balance of {} once a day; \
                 paid from {}",
                cli.daily_chips,
                cli.rescue_chips,
                cli.rescue_below,
                cli.grants_from.as_deref().unwrap_or("the dealer's account")
            ));
        }
        if !demo {
            say.info(welcome.describe());
        }
    }
    if !demo {
        for r in config_rooms.iter().filter(|r| r.house_bankroll.0 > 0 && has_house(&r.game)) {
            let play_money = if defaulted_bankroll.contains(&r.id) {
                " play-money chips, the default of a dealer only this machine can reach; \
                 --house-bankroll N to choose"
            } else {
                ""
            };
            say.info(format_args!(
                "room {}: house bankroll {}{play_money} (granted once, key bankroll/{})",
                r.id, r.house_bankroll, r.id
            ));
        }
    }
    // The admin API may open rooms with house-AI seats at run time.
    if cli.admin_api || config_rooms.iter().any(|r| r.ai_seats.is_some()) {
        let account = AccountId::new(claw_dealer::ai::DEFAULT_ACCOUNT).context("house-AI account")?;
        let budget = Chips(cli.ai_budget.or(play_money_bankroll.map(|c| c.0)).unwrap_or(0));
        let players = claw_dealer_cli::ai::SdkAi::new(tokio::runtime::Handle::current());
        builder = builder.house_ai(players, account.clone(), budget);
        if !demo {
            say.info(format_args!(
                "house AIs: paid from account {account} (budget {budget} granted once, key ai-budget/{account})"
            ));
        }
    }
    let node = builder.launch().await?;
    if !demo {
        say.info(format_args!("chips: {}", chips.label));
        if let Some(h) = node.http_addr() {
            say.info(format_args!(
                "web app http://{h}/ (lobby, spectator table, every hand's replay and audit)"
            ));
            say.info(format_args!("health http://{h}/health, metrics http://{h}/metrics"));
            if cli.admin_api {
                say.info(format_args!(
                    "admin API http://{h}/admin/rooms, bearer token in {}",
                    admin_token.display()
                ));
            }
        }
        for (room, url) in node.invite_urls() {
            say.info(format_args!("room {room}"));
            println!("{url}");
        }
    }
    let code = if demo {
        let room = node.invite_urls().first().map(|r| r.0.clone()).unwrap_or_default();
        let game = game.unwrap_or_default();
        let params = demo::DemoParams {
            room,
            game,
            bots: cli.bots,
            hands: cli.hands,
            strategy: cli.bot_strategy.clone(),
            bot_keys,
            progress: std::io::stderr().is_terminal() && cli.log_format == LogFormat::Text,
        };
        if let Some(h) = node.http_addr() {
            say.info(format_args!("web app http://{h}/room/{}", params.room));
        }
        let mut out = std::io::stdout();
        let outcome = tokio::select! {
            r = demo::run(&node, &chips.provider, &params, &mut out) => r?,
            sig = signals.wait() => {
                say.info(format_args!("{sig}: stopping"));
                node.shutdown(cli.shutdown_grace).await;
                return Ok(0);
            }
        };
        if let Some(bank) = &solana_bank {
            for (i, id) in bot_ids.iter().enumerate() {
                println!("solana tokens: bot-{i} {} {}", id.id().short(), bank.tokens_of(id));
            }
            println!("solana tokens: escrow {}", bank.escrow_tokens());
        }
        println!(
            "transcripts: {}",
            cli.data_dir.join("rooms").join(&params.room).join("transcripts").display()
        );
        if fresh_dir {
            println!(
                "data directory: {} (a fresh one for this demo; --data-dir DIR to choose one)",
                cli.data_dir.display()
            );
        }
        let code = demo_exit_code(&outcome, cli.hands, say);
        match node.http_addr() {
            Some(h) if cli.serve => {
                say.info(format_args!(
                    "serving the web app at http://{h}/ (these hands: http://{h}/room/{}) until Ctrl-C",
                    params.room
                ));
                let sig = signals.wait().await;
                say.info(format_args!("{sig}: stopping"));
            }
            _ => println!("watch and check these hands in the browser: run the same command with --serve"),
        }
        code
    } else {
        tokio::select! {
            sig = signals.wait() => say.info(format_args!("{sig}: no new hands; finishing running ones")),
            _ = node.wait_rooms_closed() => {}
        }
        0
    };
    node.shutdown(cli.shutdown_grace).await;
    if let Some(p) = chips.points {
        let g = p.store().group_stats();
        say.info(format_args!(
            "built-in points server: {} mutations in {} commits (largest group {})",
            g.mutations, g.commits, g.largest_group
        ));
        let _ = p.shutdown().await;
    }
    Ok(code)
}
