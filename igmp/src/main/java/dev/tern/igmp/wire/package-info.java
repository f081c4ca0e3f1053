/** IGMP v1/v2/v3 wire formats (RFC 1112, RFC 2236, RFC 3376). No state, no time. */
package dev.tern.igmp.wire;
