/** Ethernet: MAC addresses and headers, the Link SPI every data path implements, the memory wire and pcap capture. */
package dev.tern.ethernet;
