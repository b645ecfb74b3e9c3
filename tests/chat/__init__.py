"""The chat wing (mtokspec/chat): the renderer, its sandbox, the template lint."""
