/** UDP wire format (RFC 768). No state, no time. */
package dev.tern.udp.wire;
