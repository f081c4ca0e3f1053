/** The Internet checksum (RFC 1071) with incremental update (RFC 1624) and pseudo-header helpers. */
package dev.tern.core.checksum;
