//! The rules' integration tests in one binary (one link instead of one per
//! file); each former test file is the module of the same name.

mod blackjack_rules;
mod ddz_moves;
mod ddz_rules;
mod guandan_common;
mod guandan_patterns;
mod guandan_regression;
mod guandan_rules;
mod guandan_sim;
mod holdem_common;
mod holdem_eval;
mod holdem_input;
mod holdem_rules;
mod holdem_sim;
mod random_play;
mod sam_gong_banker_pays;
mod sam_gong_compare;
mod sam_gong_hand;
mod sam_gong_prop;
mod sam_gong_rotation;
mod sam_gong_settle;
mod setups_and_details;
mod simulate;
mod spec_game_vectors;
mod support;
mod vector_form;
