//! The few SPL Token, Associated Token Account and Memo instructions the
//! provider sends, and the token account layout it reads. Encoded here (the
//! programs' wire formats are fixed) so the provider links only the
//! solana-* crates `litesvm` itself uses.

use solana_address::Address;
use solana_instruction::{AccountMeta, Instruction};

/// SPL Token program.
pub const TOKEN_PROGRAM: Address = Address::from_str_const("TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA");
/// Associated Token Account program.
pub const ATA_PROGRAM: Address = Address::from_str_const("ATokenGPvbdGVxr1b2hvZbsiqW5xWH25efTNsLJA8knL");
/// SPL Memo program (v2).
pub const MEMO_PROGRAM: Address = Address::from_str_const("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
/// System program.
pub const SYSTEM_PROGRAM: Address = Address::from_str_const("11111111111111111111111111111111");

/// Size of an SPL token account.
pub const ACCOUNT_LEN: usize = 165;
/// Size of an SPL mint.
pub const MINT_LEN: usize = 82;

/// The associated token account of `owner` for `mint`.
pub fn associated_account(owner: &Address, mint: &Address) -> Address {
    Address::find_program_address(&[owner.as_ref(), TOKEN_PROGRAM.as_ref(), mint.as_ref()], &ATA_PROGRAM).0
}

fn amount_ix(tag: u8, amount: u64) -> Vec<u8> {
    let mut d = Vec::with_capacity(9);
    d.push(tag);
    d.extend_from_slice(&amount.to_le_bytes());
    d
}

/// `Transfer`: `authority` (owner or delegate of `source`) moves `amount`.
pub fn transfer(source: &Address, dest: &Address, authority: &Address, amount: u64) -> Instruction {
    Instruction::new_with_bytes(
        TOKEN_PROGRAM,
        &amount_ix(3, amount),
        vec![
            AccountMeta::new(*source, false),
            AccountMeta::new(*dest, false),
            AccountMeta::new_readonly(*authority, true),
        ],
    )
}

/// `Approve`: `owner` lets `delegate` move at most `amount` from `account`.
pub fn approve(account: &Address, delegate: &Address, owner: &Address, amount: u64) -> Instruction {
    Instruction::new_with_bytes(
        TOKEN_PROGRAM,
        &amount_ix(4, amount),
        vec![
            AccountMeta::new(*account, false),
            AccountMeta::new_readonly(*delegate, false),
            AccountMeta::new_readonly(*owner, true),
        ],
    )
}

/// `Revoke`: `owner` ends any delegation of `account`.
pub fn revoke(account: &Address, owner: &Address) -> Instruction {
    Instruction::new_with_bytes(
        TOKEN_PROGRAM,
        &[5],
        vec![AccountMeta::new(*account, false), AccountMeta::new_readonly(*owner, true)],
    )
}

/// `MintTo`: the mint authority creates `amount` chips in `account`.
pub fn mint_to(mint: &Address, account: &Address, authority: &Address, amount: u64) -> Instruction {
    Instruction::new_with_bytes(
        TOKEN_PROGRAM,
        &amount_ix(7, amount),
        vec![
            AccountMeta::new(*mint, false),
            AccountMeta::new(*account, false),
            AccountMeta::new_readonly(*authority, true),
        ],
    )
}

/// `InitializeMint2` with `decimals` and no freeze authority.
pub fn initialize_mint(mint: &Address, authority: &Address, decimals: u8) -> Instruction {
    let mut d = vec![20, decimals];
    d.extend_from_slice(authority.as_ref());
    d.push(0);
    Instruction::new_with_bytes(TOKEN_PROGRAM, &d, vec![AccountMeta::new(*mint, false)])
}

/// `CreateIdempotent` of the ATA program: `owner`'s associated account for
/// `mint`, paid by `payer`; nothing if it exists.
pub fn create_associated_account(payer: &Address, owner: &Address, mint: &Address) -> Instruction {
    Instruction::new_with_bytes(
        ATA_PROGRAM,
        &[1],
        vec![
            AccountMeta::new(*payer, true),
            AccountMeta::new(associated_account(owner, mint), false),
            AccountMeta::new_readonly(*owner, false),
            AccountMeta::new_readonly(*mint, false),
            AccountMeta::new_readonly(SYSTEM_PROGRAM, false),
            AccountMeta::new_readonly(TOKEN_PROGRAM, false),
        ],
    )
}

/// A memo (no signers required).
pub fn memo(text: &str) -> Instruction {
    Instruction::new_with_bytes(MEMO_PROGRAM, text.as_bytes(), vec![])
}

/// The fields of an SPL token account the provider reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TokenAccount {
    pub mint: Address,
    pub owner: Address,
    pub amount: u64,
    /// The delegate and what it may still move.
    pub delegate: Option<(Address, u64)>,
    /// Frozen by the mint's freeze authority.
    pub frozen: bool,
}

impl TokenAccount {
    /// Decodes the 165-byte layout; `None` for anything else.
    pub fn decode(data: &[u8]) -> Option<TokenAccount> {
        if data.len() != ACCOUNT_LEN {
            return None;
        }
        let addr = |at: usize| Address::new_from_array(data[at..at + 32].try_into().unwrap_or([0; 32]));
        let u64_at = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap_or([0; 8]));
        let delegate = match data[72..76] {
            [1, 0, 0, 0] => Some((addr(76), u64_at(121))),
            _ => None,
        };
        Some(TokenAccount {
            mint: addr(0),
            owner: addr(32),
            amount: u64_at(64),
            delegate,
            frozen: data[108] == 2,
        })
    }

    /// What `operator` may move from this account: the smaller of the
    /// balance and the allowance it was given.
    pub fn spendable_by(&self, operator: &Address) -> u64 {
        match self.delegate {
            Some((d, allowed)) if d == *operator && !self.frozen => allowed.min(self.amount),
            _ => 0,
        }
    }
}
