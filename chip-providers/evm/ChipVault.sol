// SPDX-License-Identifier: MIT OR Apache-2.0
pragma solidity ^0.8.24;

/// The part of ERC-20 the vault uses.
interface IERC20 {
    function balanceOf(address who) external view returns (uint256);
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// Chips of game-claw players, held in one ERC-20 token for the dealers
/// ("operators") that run hands (docs/chips-evm.md).
///
/// Enforced here, whatever an operator does:
/// - a player's account is their own EVM address, bound by the player to a
///   game id (the Ed25519 player id) with `register`; only that address
///   deposits into it and withdraws its free balance, with no operator;
/// - operators move chips only through hands: `openHand` locks stakes out of
///   free balances, `settleHand` pays the locked stakes out again; the
///   payouts plus the operator's fee equal the stakes, so a hand neither
///   creates nor destroys chips; balances are unsigned and never negative;
/// - every hand is named by an idempotency key usable once: the same call
///   again is a no-op, another call with that key reverts;
/// - a room belongs to the operator that opened its first hand; other
///   operators cannot open or settle hands there;
/// - a lock lapses at the hand's deadline (at most `maxLock` seconds after
///   opening): an unsettled hand's stakes become free again, so a vanished
///   operator cannot freeze chips;
/// - every movement emits an event, so the ledger can be rebuilt from logs.
contract ChipVault {
    /// One slot per account. `locked` counts stakes of open hands; when
    /// `lockUntil` (the latest deadline of those hands) has passed, it is free.
    struct Account {
        uint112 free;
        uint112 locked;
        uint32 lockUntil;
    }

    enum HandStatus {
        None,
        Open,
        Settled
    }

    /// `digest` is the hash of the opening (room, players, stakes) while open,
    /// and the hash of the opening and the settlement once settled.
    struct Hand {
        address operator;
        uint32 deadline;
        HandStatus status;
        bytes32 digest;
    }

    uint256 public constant MAX_PLAYERS = 32;

    IERC20 public immutable token;
    /// Longest lock a hand may ask for, in seconds.
    uint32 public immutable maxLock;
    /// Appoints operators; moves no chips.
    address public admin;

    mapping(address => bool) public isOperator;
    mapping(bytes32 => address) public roomOperator;
    mapping(address => bytes32) public gameIdOf;
    mapping(address => Account) internal accounts;
    mapping(bytes32 => Hand) public hands;

    event AdminChanged(address indexed admin);
    event OperatorSet(address indexed operator, bool enabled);
    event RoomClaimed(bytes32 indexed room, address indexed operator);
    /// `binding` is the player's Ed25519 signature binding `owner` to `gameId`
    /// (checked by dealers, not here).
    event Registered(bytes32 indexed gameId, address indexed owner, bytes binding);
    event Deposited(address indexed owner, bytes32 indexed gameId, uint256 amount, uint256 free);
    event Withdrawn(address indexed owner, uint256 amount, uint256 free);
    event Lapsed(address indexed owner, uint256 amount);
    event HandOpened(bytes32 indexed key, bytes32 indexed room, address indexed operator, uint32 deadline, uint256 total);
    event Locked(bytes32 indexed key, address indexed owner, uint256 stake);
    event Released(bytes32 indexed key, address indexed owner, uint256 stake, uint256 payout);
    event FeePaid(bytes32 indexed key, address indexed operator, uint256 amount);
    event HandSettled(bytes32 indexed key, uint256 total, uint256 fee);

    error NotAdmin();
    error NotOperator(address caller);
    error RoomTaken(bytes32 room, address operator);
    error NotHandOperator(bytes32 key, address operator);
    error KeyReused(bytes32 key);
    error HandClosed(bytes32 key);
    error UnknownHand(bytes32 key);
    error HandExpired(bytes32 key, uint32 deadline);
    error BadDeadline(uint32 deadline);
    error BadPlayers();
    error NotRegistered(address owner);
    error BadGameId();
    error Insufficient(address owner, uint256 free, uint256 needed);
    error NotBalanced(uint256 stakes, uint256 paid);
    error Overflow();
    error TokenFailed();

    constructor(IERC20 token_, uint32 maxLock_) {
        token = token_;
        maxLock = maxLock_;
        admin = msg.sender;
        emit AdminChanged(msg.sender);
    }

    modifier onlyAdmin() {
        if (msg.sender != admin) revert NotAdmin();
        _;
    }

    modifier onlyOperator() {
        if (!isOperator[msg.sender]) revert NotOperator(msg.sender);
        _;
    }

    function setAdmin(address next) external onlyAdmin {
        admin = next;
        emit AdminChanged(next);
    }

    function setOperator(address operator, bool enabled) external onlyAdmin {
        isOperator[operator] = enabled;
        emit OperatorSet(operator, enabled);
    }

    // ---- players ----

    /// Binds the caller's account to `gameId`. May be called again to rebind.
    function register(bytes32 gameId, bytes calldata binding) external {
        if (gameId == bytes32(0)) revert BadGameId();
        gameIdOf[msg.sender] = gameId;
        emit Registered(gameId, msg.sender, binding);
    }

    /// Moves `amount` tokens from the caller (who approved the vault) into
    /// the caller's free balance.
    function deposit(uint256 amount) external {
        bytes32 gameId = gameIdOf[msg.sender];
        if (gameId == bytes32(0)) revert NotRegistered(msg.sender);
        uint256 before = token.balanceOf(address(this));
        if (!token.transferFrom(msg.sender, address(this), amount)) revert TokenFailed();
        uint256 received = token.balanceOf(address(this)) - before;
        Account memory a = _lapse(msg.sender);
        uint256 free = uint256(a.free) + received;
        if (free > type(uint112).max) revert Overflow();
        a.free = uint112(free);
        accounts[msg.sender] = a;
        emit Deposited(msg.sender, gameId, received, free);
    }

    /// Pays `amount` of the caller's free balance out to the caller.
    function withdraw(uint256 amount) external {
        Account memory a = _lapse(msg.sender);
        if (a.free < amount) revert Insufficient(msg.sender, a.free, amount);
        a.free -= uint112(amount);
        accounts[msg.sender] = a;
        emit Withdrawn(msg.sender, amount, a.free);
        if (!token.transfer(msg.sender, amount)) revert TokenFailed();
    }

    /// Free and locked balance of `owner` as of now (a lapsed lock counts as free).
    function balanceOf(address owner) external view returns (uint256 free, uint256 locked, uint32 lockUntil) {
        Account memory a = accounts[owner];
        if (a.locked != 0 && a.lockUntil < block.timestamp) return (uint256(a.free) + a.locked, 0, a.lockUntil);
        return (a.free, a.locked, a.lockUntil);
    }

    // ---- operators ----

    /// Locks `stakes[i]` of `players[i]` for the hand `key` in `room` until
    /// `deadline`. Replaying the same opening is a no-op.
    function openHand(
        bytes32 key,
        bytes32 room,
        uint32 deadline,
        address[] calldata players,
        uint256[] calldata stakes
    ) external onlyOperator {
        address roomOp = roomOperator[room];
        if (roomOp == address(0)) {
            roomOperator[room] = msg.sender;
            emit RoomClaimed(room, msg.sender);
        } else if (roomOp != msg.sender) {
            revert RoomTaken(room, roomOp);
        }
        bytes32 digest = keccak256(abi.encode(room, players, stakes));
        Hand storage h = hands[key];
        if (h.status == HandStatus.Open) {
            if (h.operator == msg.sender && h.digest == digest && h.deadline == deadline) return;
            revert KeyReused(key);
        }
        if (h.status == HandStatus.Settled) revert HandClosed(key);
        if (deadline < block.timestamp || deadline > block.timestamp + maxLock) revert BadDeadline(deadline);
        if (players.length == 0 || players.length > MAX_PLAYERS || players.length != stakes.length) {
            revert BadPlayers();
        }
        uint256 total;
        for (uint256 i; i < players.length; ++i) {
            address p = players[i];
            if (gameIdOf[p] == bytes32(0)) revert NotRegistered(p);
            Account memory a = _lapse(p);
            uint256 s = stakes[i];
            if (a.free < s) revert Insufficient(p, a.free, s);
            a.free -= uint112(s);
            uint256 locked = uint256(a.locked) + s;
            if (locked > type(uint112).max) revert Overflow();
            a.locked = uint112(locked);
            if (a.lockUntil < deadline) a.lockUntil = deadline;
            accounts[p] = a;
            total += s;
            emit Locked(key, p, s);
        }
        hands[key] = Hand({operator: msg.sender, deadline: deadline, status: HandStatus.Open, digest: digest});
        emit HandOpened(key, room, msg.sender, deadline, total);
    }

    /// Ends the hand `key`: pays `payouts[i]` to `players[i]` and `fee` to
    /// the operator out of the locked stakes, which they must sum to. The
    /// opening is repeated (room, players, stakes) and must match. Replaying
    /// the same settlement is a no-op. A refund is payouts = stakes, fee = 0.
    function settleHand(
        bytes32 key,
        bytes32 room,
        address[] calldata players,
        uint256[] calldata stakes,
        uint256[] calldata payouts,
        uint256 fee
    ) external onlyOperator {
        Hand storage h = hands[key];
        if (h.status == HandStatus.None) revert UnknownHand(key);
        if (h.operator != msg.sender) revert NotHandOperator(key, h.operator);
        bytes32 opening = keccak256(abi.encode(room, players, stakes));
        bytes32 closing = keccak256(abi.encode(opening, payouts, fee));
        if (h.status == HandStatus.Settled) {
            if (h.digest == closing) return;
            revert KeyReused(key);
        }
        if (h.digest != opening || payouts.length != players.length) revert KeyReused(key);
        if (block.timestamp > h.deadline) revert HandExpired(key, h.deadline);
        uint256 staked;
        uint256 paid = fee;
        for (uint256 i; i < players.length; ++i) {
            staked += stakes[i];
            paid += payouts[i];
        }
        if (staked != paid) revert NotBalanced(staked, paid);
        for (uint256 i; i < players.length; ++i) {
            address p = players[i];
            Account memory a = accounts[p];
            // Not lapsed: every lock of p lasts at least until this hand's deadline.
            a.locked -= uint112(stakes[i]);
            uint256 free = uint256(a.free) + payouts[i];
            if (free > type(uint112).max) revert Overflow();
            a.free = uint112(free);
            accounts[p] = a;
            emit Released(key, p, stakes[i], payouts[i]);
        }
        if (fee != 0) {
            Account memory o = _lapse(msg.sender);
            uint256 free = uint256(o.free) + fee;
            if (free > type(uint112).max) revert Overflow();
            o.free = uint112(free);
            accounts[msg.sender] = o;
            emit FeePaid(key, msg.sender, fee);
        }
        h.status = HandStatus.Settled;
        h.digest = closing;
        emit HandSettled(key, staked, fee);
    }

    /// The account with a lapsed lock folded into the free balance.
    function _lapse(address owner) internal returns (Account memory a) {
        a = accounts[owner];
        if (a.locked != 0 && a.lockUntil < block.timestamp) {
            emit Lapsed(owner, a.locked);
            a.free += a.locked;
            a.locked = 0;
        }
    }
}
