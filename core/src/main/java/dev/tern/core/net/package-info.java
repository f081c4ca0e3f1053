/** IPv4 address values (packed ints) and interface addresses, shared by every layer and the CLI. */
package dev.tern.core.net;
