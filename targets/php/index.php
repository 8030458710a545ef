<?php
// The reader's three lines. N and the URL template come from the environment
// (run.sh puts them there), so one script serves any N.
header('Location: ' . str_replace('{n}', random_int(1, (int) getenv('AVATAR_N')), getenv('AVATAR_TEMPLATE')), true, 302);
