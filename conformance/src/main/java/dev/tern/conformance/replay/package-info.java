/**
 * Pcap replay: {@link dev.tern.conformance.replay.Capture} reads a capture, {@link
 * dev.tern.conformance.replay.PcapReplayLink} plays the peer's side of it to a stack and records what the stack
 * sends, {@link dev.tern.conformance.replay.Replay} drives the stack on virtual time set by the capture's
 * timestamps, and {@link dev.tern.conformance.replay.FrameComparison} says how the stack's frames differ from the
 * recorded ones.
 */
package dev.tern.conformance.replay;
