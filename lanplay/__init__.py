"""lanplay: card games across laptops on one local network."""
