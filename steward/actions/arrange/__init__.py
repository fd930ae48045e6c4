"""Moving and arranging: move, place, bringToFront, sendToBack, rotate, resize, align,
distribute, stack (one module each). Geometry runs against the mirror and is sent as
`update_shape`."""
