/** Stack counters in memory-mapped files (Agrona counters), readable from another process by {@code tern stat}. */
package dev.tern.core.counters;
