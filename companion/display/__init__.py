"""The table display: a web page that shows the game at a glance, live (`play --display`)."""
