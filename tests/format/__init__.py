"""The format wing (mtokspec/format, spec/, generated/): codec, generator, golden file, Kaitai."""
