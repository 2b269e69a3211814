"""What the referee says: sentences worded from events, game state and refusals
(`phrases`, `refusals`), and the speakers that print, speak or record them (`speakers`)."""
