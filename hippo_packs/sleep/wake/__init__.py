"""What wakes others when the cycle moves: the webhook (:mod:`.notify`) and the ripple that
wakes the main model (:mod:`.ripple`). Both are ``hippo_event`` listeners, called by the
kernel with the cycle's events; the cycle never imports them."""
