/** Keyed hashes for values an off-path attacker must not predict (IP identification, per-peer table slots). */
package dev.tern.core.hash;
