"""The convert wing (mtokspec/convert): from_hf, to_hf, the legacy upgrade."""
