/** Clocks (system and virtual) and the per-shard timer wheel. */
package dev.tern.core.time;
